import sys

from clgemm.cli import main

sys.exit(main())
