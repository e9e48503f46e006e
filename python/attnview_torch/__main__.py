import sys

from .tool import main

sys.exit(main())
