"""An index in an S3 bucket (or any S3-compatible store), through boto3.

The endpoint, region and credentials come from the usual AWS settings (``AWS_ENDPOINT_URL``,
``AWS_ENDPOINT_URL_S3``, profiles, ...), so the same code works with AWS, MinIO or moto. Objects are
served with their stored Content-Type, so each page is written with its own. Conditional writes use
``If-None-Match: *`` (files, never replaced) and ``If-Match: <etag>`` (state pages); a lost condition is
HTTP 412. Reads are public: the bucket's policy must let anonymous clients ``GetObject``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from slimwheel.publish.errors import ConflictError, DestinationError
from slimwheel.publish.store import ObjectInfo, StoredObject, StoreStats

__all__ = ["S3Store"]

_SHA256_KEY = "sha256"  # user metadata (x-amz-meta-sha256) recorded with every file


class S3Store:
    """``s3://bucket/prefix``."""

    pages_at_folder_keys = True

    def __init__(
        self, bucket: str, prefix: str, *, description: str | None = None, client: Any = None
    ) -> None:
        self.bucket = bucket
        self.prefix = f"{prefix}/" if prefix else ""
        self.description = description or f"s3://{bucket}/{prefix}"
        self.stats = StoreStats()
        if client is None:
            try:
                import boto3  # type: ignore[import-untyped]
            except ImportError as error:
                raise DestinationError(
                    f"{self.description}: boto3 is not installed", hint="pip install 'slimwheel[s3]'"
                ) from error
            client = boto3.client("s3")
        self._client = client
        from botocore.exceptions import BotoCoreError, ClientError  # type: ignore[import-untyped]

        self._client_error = ClientError
        self._errors: tuple[type[BaseException], ...] = (ClientError, BotoCoreError)

    def public_url(self, key: str) -> str | None:
        endpoint = str(self._client.meta.endpoint_url).rstrip("/")
        return f"{endpoint}/{self.bucket}/{self.prefix}{key}"

    def read(self, key: str) -> StoredObject | None:
        self.stats.add("reads")
        try:
            answer = self._client.get_object(Bucket=self.bucket, Key=self.prefix + key)
            data = answer["Body"].read()
        except self._errors as error:
            if self._status(error) == 404:
                return None
            raise self._failure(key, error) from error
        return StoredObject(key, data, str(answer["ETag"]), answer.get("ContentType"))

    def head(self, key: str) -> ObjectInfo | None:
        self.stats.add("heads")
        try:
            answer = self._client.head_object(Bucket=self.bucket, Key=self.prefix + key)
        except self._errors as error:
            if self._status(error) == 404:
                return None
            raise self._failure(key, error) from error
        metadata = answer.get("Metadata") or {}
        return ObjectInfo(key, int(answer["ContentLength"]), str(answer["ETag"]), metadata.get(_SHA256_KEY))

    def sha256_of(self, key: str) -> str | None:
        info = self.head(key)
        if info is None or info.sha256 is not None:
            return None if info is None else info.sha256
        # Written by something else, without the recorded hash: read the bytes.
        import hashlib

        self.stats.add("reads")
        try:
            body = self._client.get_object(Bucket=self.bucket, Key=self.prefix + key)["Body"]
            digest = hashlib.sha256()
            for chunk in iter(lambda: body.read(1024 * 1024), b""):
                digest.update(chunk)
        except self._errors as error:
            raise self._failure(key, error) from error
        return digest.hexdigest()

    def write(
        self,
        key: str,
        data: bytes,
        *,
        content_type: str,
        if_match: str | None = None,
        if_absent: bool = False,
        sha256: str | None = None,
    ) -> str:
        options: dict[str, Any] = {"ContentType": content_type}
        if if_match is not None:
            options["IfMatch"] = if_match
        if if_absent:
            options["IfNoneMatch"] = "*"
        if sha256 is not None:
            options["Metadata"] = {_SHA256_KEY: sha256}
        if content_type.startswith(("text/html", "application/vnd.pypi")):
            # Pages change: a client revalidates them (files never change and may be cached).
            options["CacheControl"] = "no-cache"
        self.stats.add("writes")
        try:
            answer = self._client.put_object(Bucket=self.bucket, Key=self.prefix + key, Body=data, **options)
        except self._errors as error:
            if self._status(error) in (409, 412):
                raise ConflictError(key) from error
            raise self._failure(key, error) from error
        return str(answer["ETag"])

    def upload(self, key: str, source: Path, *, content_type: str, sha256: str) -> bool:
        self.stats.add("writes")
        try:
            # put_object streams the file in one request (up to 5 GB, S3's single-PUT limit).
            with source.open("rb") as body:
                self._client.put_object(
                    Bucket=self.bucket,
                    Key=self.prefix + key,
                    Body=body,
                    ContentType=content_type,
                    Metadata={_SHA256_KEY: sha256},
                    IfNoneMatch="*",
                )
        except self._errors as error:
            if self._status(error) in (409, 412):
                return False
            raise self._failure(key, error) from error
        return True

    def copy(self, source_key: str, key: str, *, content_type: str, sha256: str) -> bool:
        # CopyObject takes no If-None-Match on every store: ask first. A copy racing another copy of
        # the same file writes the same bytes; the caller checks the sha256 afterwards either way.
        if self.head(key) is not None:
            return False
        self.stats.add("writes")
        try:
            self._client.copy_object(
                Bucket=self.bucket,
                Key=self.prefix + key,
                CopySource={"Bucket": self.bucket, "Key": self.prefix + source_key},
                ContentType=content_type,
                Metadata={_SHA256_KEY: sha256},
                MetadataDirective="REPLACE",
            )
        except self._errors as error:
            raise self._failure(key, error) from error
        return True

    def list(self, prefix: str) -> Iterator[ObjectInfo]:
        paginator = self._client.get_paginator("list_objects_v2")
        try:
            for page in paginator.paginate(Bucket=self.bucket, Prefix=self.prefix + prefix):
                self.stats.add("lists")
                for entry in page.get("Contents", ()):
                    key = str(entry["Key"])[len(self.prefix) :]
                    yield ObjectInfo(key, int(entry["Size"]), str(entry["ETag"]), None)
        except self._errors as error:
            raise self._failure(prefix, error) from error

    def close(self) -> None:
        self._client.close()

    # -- helpers ---------------------------------------------------------------------------------

    @staticmethod
    def _status(error: BaseException) -> int | None:
        response = getattr(error, "response", None) or {}
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return int(status) if status is not None else None

    @staticmethod
    def _code(error: BaseException) -> str:
        response = getattr(error, "response", None) or {}
        return str(response.get("Error", {}).get("Code", ""))

    def _failure(self, key: str, error: BaseException) -> DestinationError:
        where = f"s3://{self.bucket}/{self.prefix}{key}"
        return DestinationError(
            f"{where}: {' '.join(str(error).split())}",
            hint="check the bucket, the credentials and AWS_ENDPOINT_URL",
        )
