"""uqkit: structural uncertainty quantification."""
