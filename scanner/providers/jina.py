NAME = "jina"
HOSTS = frozenset()
