"""The study's web layer: the Flask application, endpoints, admin pages, limits (and Flask)."""
