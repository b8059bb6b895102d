NAME = "firecrawl"
HOSTS = frozenset()
