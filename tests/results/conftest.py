"""Result tests read the JSON that the notebooks recorded (lrank.results) and assert the numbers."""
