"""The S3 side of staging: clients (client.py), the destination prefix and its objects
(destination.py), the transfer clients (transfers.py), S3 URIs (uri.py) and S3 errors as the
user reads them (errors.py). Nothing is imported here, so that a module of this package loads
only what it needs."""
