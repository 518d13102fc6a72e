"""android."""
