"""Allow ``python -m tracktale``."""

from tracktale.app.cli import main

if __name__ == "__main__":
    main()
