import sys

from rib_analysis.history.command import main

sys.exit(main())
