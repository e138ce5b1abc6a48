import sys

from itmp.cli import main

sys.exit(main())
