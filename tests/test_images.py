"""The image gate of every input format: confinement to the image root, refusal of remote and
non-text references, a full Pillow decode under the byte and pixel caps."""

from __future__ import annotations

import base64
import io
import struct
import zlib

import pytest
from PIL import Image

from confeval.images import MAX_IMAGE_PIXELS, ImageError, check_image, checked_images, image_url


def png_bytes(size=(4, 3), colour="red") -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, colour).save(buf, format="PNG")
    return buf.getvalue()


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` with almost no data behind it."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0"))
            + chunk(b"IEND", b""))


def reason(ref, root) -> str:
    with pytest.raises(ImageError) as info:
        check_image(ref, root)
    return info.value.reason


@pytest.fixture
def root(tmp_path):
    data = tmp_path / "data"
    (data / "img").mkdir(parents=True)
    (data / "img" / "ok.png").write_bytes(png_bytes())
    (tmp_path / "secret.txt").write_text("TOP-SECRET-42")
    return data


def test_a_path_inside_the_root_is_resolved_and_sent_as_its_own_bytes(root):
    ref = check_image("img/ok.png", root)
    assert ref == str((root / "img" / "ok.png").resolve())
    url = image_url(ref)
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == (root / "img" / "ok.png").read_bytes()
    assert check_image(f"file://{ref}", root) == ref


@pytest.mark.parametrize("ref", ["/etc/passwd", "../secret.txt", "img/../../secret.txt",
                                 "file:///etc/passwd"])
def test_paths_leaving_the_root_are_refused(root, ref):
    assert reason(ref, root) == "image_outside_dataset"


def test_a_symlink_out_of_the_root_is_refused(root):
    (root / "img" / "link.png").symlink_to(root.parent / "secret.txt")
    assert reason("img/link.png", root) == "image_outside_dataset"


@pytest.mark.parametrize("ref,why", [
    (123, "invalid_image_ref"), (["a.png"], "invalid_image_ref"), ("", "invalid_image_ref"),
    ("http://169.254.169.254/latest/meta-data", "remote_image"),
    ("HTTPS://example.org/x.png", "remote_image"), ("img/none.png", "missing_image"),
    ("img", "missing_image"),
])
def test_references_that_are_no_local_image_are_refused(root, ref, why):
    assert reason(ref, root) == why


def test_corrupt_and_non_image_files_are_unreadable(root):
    good = png_bytes((40, 40))
    (root / "img" / "cut.png").write_bytes(good[: len(good) // 2])
    (root / "img" / "text.png").write_text("not an image")
    assert reason("img/cut.png", root) == "unreadable_image"
    assert reason("img/text.png", root) == "unreadable_image"


@pytest.fixture
def decodes(monkeypatch):
    """Every image file Pillow decodes (``ImageFile.load``, where the pixel data is read),
    counted: "refused before decoding" shown by a count, not by a clock."""
    from PIL import ImageFile

    seen: list[tuple[int, int]] = []
    load = ImageFile.ImageFile.load

    def counted(self):
        seen.append(self.size)
        return load(self)

    monkeypatch.setattr(ImageFile.ImageFile, "load", counted)
    return seen


def test_a_huge_header_and_a_bomb_are_refused_before_decoding(root, decodes):
    (root / "img" / "huge.png").write_bytes(png_header_only(20000, 20000))
    assert reason("img/huge.png", root) == "image_too_large"
    side = int(MAX_IMAGE_PIXELS ** 0.5) + 1  # a real bomb: tiny file, too many pixels
    buf = io.BytesIO()
    Image.new("1", (side, side)).save(buf, format="PNG")
    assert len(buf.getvalue()) < 1_000_000
    (root / "img" / "bomb.png").write_bytes(buf.getvalue())
    assert reason("img/bomb.png", root) == "image_too_large"
    assert decodes == []                     # neither was decoded
    check_image("img/ok.png", root)
    assert decodes == [(4, 3)]               # while a small image is, fully


def test_data_urls_are_decoded_under_the_same_caps(root):
    ok = "data:image/png;base64," + base64.b64encode(png_bytes()).decode()
    assert check_image(ok, root) == ok and image_url(ok) == ok
    huge = "data:image/png;base64," + base64.b64encode(png_header_only(20000, 20000)).decode()
    assert reason(huge, root) == "image_too_large"
    assert reason("data:image/png;base64,%%%", root) == "unreadable_image"
    assert reason("data:text/plain,hello", root) == "unreadable_image"
    # the MIME type sent is what Pillow decoded, not what the URL claims
    lying = "data:image/gif;base64," + base64.b64encode(png_bytes()).decode()
    assert image_url(check_image(lying, root)).startswith("data:image/png;")


def test_other_formats_are_reencoded_as_png(root):
    Image.new("RGB", (5, 5), "blue").save(root / "img" / "b.bmp", format="BMP")
    url = image_url(check_image("img/b.bmp", root))
    assert url.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as im:
        assert im.format == "PNG" and im.size == (5, 5)


def test_an_item_with_one_bad_image_is_refused_whole(root):
    assert checked_images(None, root) == ([], None)
    assert checked_images(["img/ok.png", "/etc/passwd"], root) == ([], "image_outside_dataset")
    refs, why = checked_images(["img/ok.png"], root)
    assert why is None and refs == [str((root / "img" / "ok.png").resolve())]
