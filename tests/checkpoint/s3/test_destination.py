"""The destination prefix: listing and cleanup over every page of S3's answers."""

from __future__ import annotations

import boto3
from botocore.stub import Stubber

from checkpoint.s3.destination import Destination
from checkpoint.s3.uri import S3Location


def test_listing_and_cleanup_follow_every_page():
    client = boto3.client("s3", region_name="us-east-2")
    prefix = {"Bucket": "bkt", "Prefix": "p/"}
    with Stubber(client) as stub:
        stub.add_response(
            "list_objects_v2",
            {
                "Contents": [{"Key": "p/a", "Size": 1}],
                "IsTruncated": True,
                "NextContinuationToken": "t",
            },
            prefix,
        )
        stub.add_response(
            "list_objects_v2",
            {"Contents": [{"Key": "p/b", "Size": 2}], "IsTruncated": False},
            {**prefix, "ContinuationToken": "t"},
        )
        stub.add_response(
            "list_multipart_uploads",
            {
                "Uploads": [{"Key": "p/a", "UploadId": "u1"}],
                "IsTruncated": True,
                "NextKeyMarker": "p/a",
                "NextUploadIdMarker": "u1",
            },
            prefix,
        )
        stub.add_response(
            "abort_multipart_upload", {}, {"Bucket": "bkt", "Key": "p/a", "UploadId": "u1"}
        )
        stub.add_response(
            "list_multipart_uploads",
            {"Uploads": [{"Key": "p/b", "UploadId": "u2"}], "IsTruncated": False},
            {**prefix, "KeyMarker": "p/a", "UploadIdMarker": "u1"},
        )
        stub.add_response(
            "abort_multipart_upload", {}, {"Bucket": "bkt", "Key": "p/b", "UploadId": "u2"}
        )
        destination = Destination(client, S3Location("bkt", "p"))
        assert destination.list_keys() == {"p/a": 1, "p/b": 2}
        assert destination.abort_incomplete_uploads() == 2
        stub.assert_no_pending_responses()
