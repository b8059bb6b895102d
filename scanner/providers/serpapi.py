NAME = "serpapi"
HOSTS = frozenset()
