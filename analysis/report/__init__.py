"""The report: its sections, tables, figures and the HTML page."""
