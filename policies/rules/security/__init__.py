"""Rules on what is exposed: ingress, buckets, IAM, the Hugging Face token, the EKS endpoint, images."""
