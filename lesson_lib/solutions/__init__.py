"""Every lesson, side room solutions: the tested answers to the exercises.

One module per lesson (``lesson01`` ...). A notebook's collapsed solution cell
shows this code, and the checkers are run against it in the tests.
"""
