import CGD

/// A profile photo as the server keeps it: whatever the app sent (PNG, JPEG, GIF or BMP, as Yona's ImageIO took)
/// decoded with libgd and encoded again as PNG, which keeps the pixels only: EXIF (GPS position, camera, time),
/// XMP and every other chunk or segment stays behind. What does not decode is refused.
package enum PhotoImage {
    /// Yona's limit on the uploaded file (`spring.servlet.multipart.max-file-size=128KB`).
    package static let maxBytes = 128 * 1024
    /// The largest side decoded: a 128 KB PNG can declare a picture that takes gigabytes once decoded, so the
    /// declared size is checked before libgd allocates anything.
    package static let maxSide = 2048

    package enum Format: Equatable { case png, jpeg, gif, bmp }

    package static func format(of bytes: [UInt8]) -> Format? {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8)) { return .gif }
        if bytes.starts(with: Array("BM".utf8)) { return .bmp }
        return nil
    }

    /// The width and height the file declares, read from its header without decoding; nil when unreadable.
    package static func declaredSize(of bytes: [UInt8], _ format: Format) -> (width: Int, height: Int)? {
        func bigEndian(_ at: Int, _ count: Int) -> Int? {
            guard at >= 0, at + count <= bytes.count else { return nil }
            return bytes[at..<at + count].reduce(0) { $0 << 8 | Int($1) }
        }
        func littleEndian(_ at: Int, _ count: Int) -> Int? {
            guard at >= 0, at + count <= bytes.count else { return nil }
            return bytes[at..<at + count].reversed().reduce(0) { $0 << 8 | Int($1) }
        }
        switch format {
        case .png:
            // The IHDR chunk comes first: length, "IHDR", width, height.
            guard bytes.count >= 24, Array(bytes[12..<16]) == Array("IHDR".utf8), let width = bigEndian(16, 4), let height = bigEndian(20, 4)
            else { return nil }
            return (width, height)
        case .gif:
            guard let width = littleEndian(6, 2), let height = littleEndian(8, 2) else { return nil }
            return (width, height)
        case .bmp:
            guard let width = littleEndian(18, 4), let rawHeight = littleEndian(22, 4) else { return nil }
            // The height is signed (negative: rows stored top-down).
            let height = rawHeight >= 1 << 31 ? (1 << 32) - rawHeight : rawHeight
            return (width, height)
        case .jpeg:
            return jpegSize(bytes)
        }
    }

    /// Walks the JPEG segments to the first start-of-frame marker, which holds the size.
    private static func jpegSize(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        var at = 2
        while at + 4 <= bytes.count {
            guard bytes[at] == 0xFF else { return nil }
            let marker = bytes[at + 1]
            if marker == 0xFF {
                at += 1 // fill byte
                continue
            }
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            let isStartOfFrame = (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker)
            if isStartOfFrame {
                guard at + 9 <= bytes.count else { return nil }
                let height = Int(bytes[at + 5]) << 8 | Int(bytes[at + 6])
                let width = Int(bytes[at + 7]) << 8 | Int(bytes[at + 8])
                return (width, height)
            }
            guard length >= 2 else { return nil }
            at += 2 + length
        }
        return nil
    }

    /// The photo as PNG, or `error.user.photo.invalid.file.type` when it is not an image of a kind taken, is larger
    /// than `maxSide` either way, or does not decode.
    package static func reencodedAsPNG(_ bytes: [UInt8]) throws(YonaError) -> [UInt8] {
        guard let format = format(of: bytes), let size = declaredSize(of: bytes, format),
            (1...maxSide).contains(size.width), (1...maxSide).contains(size.height), bytes.count <= Int(Int32.max)
        else { throw YonaError(.invalidPhotoFileType) }
        yona_gd_silence()
        var input = bytes
        let decoded: gdImagePtr? = input.withUnsafeMutableBytes { raw in
            let size = Int32(raw.count)
            switch format {
            case .png: return gdImageCreateFromPngPtr(size, raw.baseAddress)
            case .jpeg: return gdImageCreateFromJpegPtrEx(size, raw.baseAddress, 1)
            case .gif: return gdImageCreateFromGifPtr(size, raw.baseAddress)
            case .bmp: return gdImageCreateFromBmpPtr(size, raw.baseAddress)
            }
        }
        guard let image = decoded else { throw YonaError(.invalidPhotoFileType) }
        defer { gdImageDestroy(image) }
        // Whatever the header said, the decoded picture is what counts.
        guard (1...maxSide).contains(Int(yona_gd_width(image))), (1...maxSide).contains(Int(yona_gd_height(image))) else {
            throw YonaError(.invalidPhotoFileType)
        }
        gdImageSaveAlpha(image, 1)
        var length: Int32 = 0
        guard let png = gdImagePngPtr(image, &length), length > 0 else { throw YonaError(.invalidPhotoFileType) }
        defer { gdFree(png) }
        return Array(UnsafeRawBufferPointer(start: png, count: Int(length)))
    }
}
