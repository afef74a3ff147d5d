"""Golden playthroughs of every env (see record.py)."""
