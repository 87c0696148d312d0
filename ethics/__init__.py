"""Ethics documents: consent, information, debrief and data plan (the single source)."""
