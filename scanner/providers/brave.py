NAME = "brave"
HOSTS = frozenset()
