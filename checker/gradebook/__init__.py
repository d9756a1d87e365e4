"""A class's gradebook: grading a folder of submissions into grades.csv, feedback and results (book), the
class-level files (classbook), the roster and deadlines (roster), and similar pairs (similarity)."""
