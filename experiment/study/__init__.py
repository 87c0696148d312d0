"""The study's rules, independent of HTTP: configuration, list design, sessions, trials, scoring."""
