"""studies: the paper's examples as runnable studies."""
