NAME = "serper"
HOSTS = frozenset()
