"""Where a checkpoint comes from: what every source has in common (base.py), the Hugging Face
Hub (hf.py), a local directory (local.py), S3 (s3.py). Nothing is imported here, so that a
module of this package loads only what it needs (the Hub client only for hf://)."""
