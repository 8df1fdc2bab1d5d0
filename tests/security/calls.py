"""The AWS calls the project's own code makes, read from its source (AST), as S3 operations and
the IAM actions each needs.

A call is an attribute call whose name is an operation of botocore's S3 model in boto3's snake
case (`client.list_multipart_uploads(...)`), a paginator named by one
(`get_paginator("list_objects_v2")`), or a transfer of boto3/s3transfer (`upload_file`, a transfer
manager's `upload`/`copy`), which makes several operations. Each operation maps to the IAM
actions AWS documents for it ("Required permissions for Amazon S3 API operations",
https://docs.aws.amazon.com/AmazonS3/latest/userguide/using-with-s3-policy-actions.html and each
operation's API reference page, "Permissions"). An operation the code calls with no entry in
OPERATION_ACTIONS fails the tests that use this: add it with its source.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# S3 operation -> (IAM action, which resource of the call it is judged on). "copy-source": the
# object a copy reads. Multipart uploads and HEAD requests need the action of the whole
# operation (API_CreateMultipartUpload, API_UploadPart, API_CompleteMultipartUpload: s3:PutObject;
# API_HeadObject: s3:GetObject; API_HeadBucket and API_ListObjectsV2: s3:ListBucket;
# API_ListParts: s3:ListMultipartUploadParts; API_DeleteObjects: s3:DeleteObject per key;
# API_CopyObject, API_UploadPartCopy: s3:GetObject on the source, s3:PutObject on the target).
OPERATION_ACTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "GetObject": (("s3:GetObject", "object"),),
    "HeadObject": (("s3:GetObject", "object"),),
    "PutObject": (("s3:PutObject", "object"),),
    "CreateMultipartUpload": (("s3:PutObject", "object"),),
    "UploadPart": (("s3:PutObject", "object"),),
    "CompleteMultipartUpload": (("s3:PutObject", "object"),),
    "AbortMultipartUpload": (("s3:AbortMultipartUpload", "object"),),
    "ListParts": (("s3:ListMultipartUploadParts", "object"),),
    "DeleteObject": (("s3:DeleteObject", "object"),),
    "DeleteObjects": (("s3:DeleteObject", "object"),),
    "CopyObject": (("s3:PutObject", "object"), ("s3:GetObject", "copy-source")),
    "UploadPartCopy": (("s3:PutObject", "object"), ("s3:GetObject", "copy-source")),
    "ListObjectsV2": (("s3:ListBucket", "bucket"),),
    "ListMultipartUploads": (("s3:ListBucketMultipartUploads", "bucket"),),
    "GetBucketLocation": (("s3:GetBucketLocation", "bucket"),),
    "HeadBucket": (("s3:ListBucket", "bucket"),),
}
# boto3's and s3transfer's transfers: the operations each may make (s3transfer's upload.py,
# copies.py, download.py; the CRT client's meta-requests make the same).
_UPLOAD = ("PutObject", "CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload",
           "AbortMultipartUpload")  # fmt: skip
_COPY = ("HeadObject", "CopyObject", "CreateMultipartUpload", "UploadPartCopy",
         "CompleteMultipartUpload", "AbortMultipartUpload")  # fmt: skip
TRANSFERS = {
    "upload_file": _UPLOAD,
    "upload_fileobj": _UPLOAD,
    "download_file": ("HeadObject", "GetObject"),
    "download_fileobj": ("HeadObject", "GetObject"),
}
# A transfer manager's methods (s3transfer TransferManager, CRTTransferManager): on a receiver
# whose source names a manager.
MANAGER_METHODS = {"upload": _UPLOAD, "copy": _COPY, "download": ("HeadObject", "GetObject")}


@dataclass(frozen=True)
class Call:
    path: str  # relative to the repository
    line: int
    operation: str  # the S3 operation, e.g. ListMultipartUploads

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.operation}"


@functools.cache
def s3_operations() -> dict[str, str]:
    """boto3's method name -> S3 operation name, from botocore's S3 model."""
    import botocore.session
    from botocore import xform_name

    model = botocore.session.get_session().get_service_model("s3")
    return {xform_name(op): op for op in model.operation_names}


def calls_in(paths: list[str]) -> list[Call]:
    """Every S3 operation the files at `paths` (relative to the repository) call."""
    ops = s3_operations()
    found = []
    for path in paths:
        source = (ROOT / path).read_text()
        for node in ast.walk(ast.parse(source, path)):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            method = node.func.attr
            made: tuple[str, ...] = ()
            if method in ops:
                made = (ops[method],)
            elif method == "get_paginator" and node.args and isinstance(node.args[0], ast.Constant):
                made = (ops[node.args[0].value],)
            elif method in TRANSFERS:
                made = TRANSFERS[method]
            elif method in MANAGER_METHODS and "manager" in ast.unparse(node.func.value).lower():
                made = MANAGER_METHODS[method]
            found += [Call(path, node.lineno, op) for op in made]
    return found
