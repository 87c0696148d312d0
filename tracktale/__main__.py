"""Allow ``python -m tracktale``."""

from tracktale.cli import main

if __name__ == "__main__":
    main()
