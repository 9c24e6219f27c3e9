"""``kpt pkg update`` in kpt's shape: the package merge, its strategies, subpackages and non-KRM files."""
