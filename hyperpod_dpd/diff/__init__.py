"""`hyperpod-dpd diff`: two plans compared (directories or git refs), rendered as text, markdown or JSON, with the one-variable-per-iteration advisory."""
