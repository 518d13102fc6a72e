import sys

from digirl.cli.main import main

sys.exit(main())
