"""`python -m scanner.rx [FILE]`: write the bundled packs' RE2 programs (scanner/rx/programs.json.gz)."""

import os

from scanner.rx import stored

os.environ[stored.ENV] = "0"          # before the first compile: the file is written from the sources alone
# The packs validated from their YAML, as without a cache: loading the lexicon compiles its groups, and the order
# of the first compiles decides the alphabet's atoms (scanner.packcache would compile them later, elsewhere).
os.environ["CENTINELA_PACK_CACHE"] = "0"
stored.main()
