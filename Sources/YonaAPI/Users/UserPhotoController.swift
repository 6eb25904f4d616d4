import Foundation
import Vapor
import YonaDomain

/// Profile photos as Yona: `PUT`/`DELETE /users/{u}/photo` (the owner's password; the upload as
/// `multipart/form-data` with a `file` part of at most 128 KB), and `GET /userPhotos/{id}` for anyone holding the
/// link, as the apps show buddies' photos.
package enum UserPhotoController {
    package static func register(_ routes: any RoutesBuilder) {
        // Room for the multipart framing around a file of the largest size taken; a larger file gets 413.
        let maxBodyBytes = PhotoImage.maxBytes + 16 * 1024
        routes.on(.PUT, "users", ":userID", "photo", body: .collect(maxSize: ByteCount(value: maxBodyBytes)), use: upload)
            .maxBodyBytes = maxBodyBytes
        routes.delete("users", ":userID", "photo", use: remove)
        routes.get("userPhotos", ":photoID", use: download)
    }

    package struct Upload: Content {
        package var file: File?
    }

    /// What the upload answers: Yona's `UserPhotoResource`, only the link to the stored photo.
    package struct UploadedDTO: Encodable {
        package let _links: HALLinks
    }

    @Sendable package static func upload(req: Request) async throws -> Response {
        let user = try await req.unlockPathUser()
        guard req.headers.contentType?.type == "multipart", req.headers.contentType?.subType == "form-data" else {
            throw YonaError(.unsupportedMediaType)
        }
        guard let file = (try? req.content.decode(Upload.self))?.file else { throw YonaError(.missingProperty, quoting: "file") }
        guard file.data.readableBytes <= PhotoImage.maxBytes else { throw YonaError(.tooLarge) }
        try await req.limitPhotoUploads(from: user.id)
        let bytes = Array(file.data.readableBytesView)
        // Decoding is CPU work: off the event loop.
        let png = try await req.application.threadPool.runIfActive { try PhotoImage.reencodedAsPNG(bytes) }
        let (_, photoID) = try await req.photos.set(png, for: user)
        var links = HALLinks.withoutSelf()
        links.add("yona:userPhoto", req.rendering.links.userPhoto(photoID))
        // Yona answered the upload as `application/json` whatever the client accepted (its test checks that).
        let response = try Response.hal(UploadedDTO(_links: links))
        response.headers.replaceOrAdd(name: .contentType, value: "application/json")
        return response
    }

    @Sendable package static func remove(req: Request) async throws -> HTTPStatus {
        let user = try await req.unlockPathUser()
        _ = try await req.photos.remove(for: user)
        return .noContent
    }

    @Sendable package static func download(req: Request) async throws -> Response {
        let png = try await req.photos.png(try req.uuidParameter("photoID"))
        var headers = HTTPHeaders()
        headers.add(name: .contentType, value: "image/png")
        // The link is the key: a cache may keep the picture, but it is nobody's business to index it.
        headers.add(name: .cacheControl, value: "private, max-age=86400")
        return Response(status: .ok, headers: headers, body: .init(data: Data(png)))
    }
}
