"""Storage of the human study: the database, its tables, the journal and pseudonyms."""
