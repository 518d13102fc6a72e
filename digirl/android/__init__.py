"""Android backend over adb: devices (:mod:`digirl.android.device`), emulator and device pools
(:mod:`digirl.android.emulator`) and the judged env (:mod:`digirl.android.env`). Needs the
``android`` extra (adbutils); importing this package alone does not. See docs/android.md."""
