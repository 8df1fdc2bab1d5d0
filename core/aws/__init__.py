"""What AWS accepts and offers, as its APIs and the pinned botocore and moto know it: generated facts, rules no schema holds, EC2 numbers, CIDR and subnet maths."""
