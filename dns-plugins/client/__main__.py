import sys

from mast_dns.cli import main

sys.exit(main())
