"""`python -m scanner.rx [FILE]`: write the bundled packs' RE2 programs (scanner/rx/programs.json)."""

import os

from scanner.rx import stored

os.environ[stored.ENV] = "0"          # before the first compile: the file is written from the sources alone
stored.main()
