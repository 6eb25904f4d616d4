import Foundation
import Vapor
import YonaDomain

/// `/users/{u}/messages/...` and the user-less `/messages/{id}` that pushes point at.
package enum MessagesController {
    package static func register(_ routes: any RoutesBuilder) {
        let messages = routes.grouped("users", ":userID", "messages")
        messages.get(use: list)
        messages.get(":messageID", use: get)
        messages.delete(":messageID", use: delete)
        messages.post(":messageID", ":action", use: act)
        routes.get("messages", ":messageID", use: getUserless)
    }

    @Sendable package static func list(req: Request) async throws -> Response {
        let user = try await unlockConfirmed(req, userID: try req.uuidParameter("userID"))
        let number = try req.pagingParameter("page", default: 0, range: 0...1_000_000)
        let size = try req.pagingParameter("size", default: 20, range: 1...100)
        let onlyUnread: Bool
        switch req.queryValue("onlyUnreadMessages") {
        case nil, "false": onlyUnread = false
        case "true": onlyUnread = true
        default: throw YonaError(.invalidParameter)
        }
        // Spring's `sort` (`creationTime`, `creationTime,desc`): Yona's inbox is newest first whatever it says, and its
        // paging links carry it on; so do ours.
        let sort = req.queryValue("sort")
        if let sort, sort.wholeMatch(of: /[A-Za-z]{1,40}(,(asc|desc|ASC|DESC))?/) == nil { throw YonaError(.invalidParameter) }
        let page = try await req.messages.page(of: user, number: number, size: size, onlyUnread: onlyUnread)
        return try .hal(req.rendering.messagePage(page, of: user, onlyUnread: onlyUnread, sort: sort))
    }

    @Sendable package static func get(req: Request) async throws -> Response {
        let user = try await unlockConfirmed(req, userID: try req.uuidParameter("userID"))
        return try .hal(req.rendering.message(try await req.messages.message(try messageID(req), of: user), of: user, topLevel: true))
    }

    /// The URL a push carries: the app adds its own `requestingUserId`.
    @Sendable package static func getUserless(req: Request) async throws -> Response {
        let user = try await unlockConfirmed(req, userID: try req.requiredUUIDQuery("requestingUserId"))
        return try .hal(req.rendering.message(try await req.messages.message(try messageID(req), of: user), of: user, topLevel: true))
    }

    @Sendable package static func delete(req: Request) async throws -> Response {
        let user = try await unlockConfirmed(req, userID: try req.uuidParameter("userID"))
        let id = try messageID(req)
        try await req.messages.delete(id, of: user)
        // As Yona: the deleted message is not listed among the affected ones.
        return try .hal(MessageActionResultDTO(properties: .init(status: "done"), _embedded: ["yona:affectedMessages": []]))
    }

    @Sendable package static func act(req: Request) async throws -> Response {
        let user = try await unlockConfirmed(req, userID: try req.uuidParameter("userID"))
        let id = try messageID(req)
        let text = try req.decodeStrict(MessageActionRequest.self).properties?["message"]
        let affected: OpenedMessage
        switch req.parameters.get("action") {
        case "markRead": affected = try await req.messages.setRead(id, of: user, to: true)
        case "markUnread": affected = try await req.messages.setRead(id, of: user, to: false)
        case let action? where action == "accept" || action == "reject":
            let message = try await req.messages.message(id, of: user)
            if message.payload.kind == .disclosureRequest {
                try await req.buddies.answerDisclosure(user, request: message, accept: action == "accept", text: text, messages: req.messages)
            } else {
                _ = try await req.buddies.respond(user, to: message, accept: action == "accept", text: text)
            }
            affected = try await req.messages.message(id, of: user)
        case "reply":
            // As Yona (ActivityCommentMessageDto): the message is found and must be a comment before its text is
            // asked for; a reply without one gets Yona's code, a blank one stays refused as a comment is.
            let message = try await req.messages.message(id, of: user)
            guard message.payload.kind == .activityComment else { throw YonaError(.messageActionNotSupported) }
            guard text != nil else { throw YonaError(.messageActionMissingProperty, quoting: "message") }
            let reply = try await req.comments.reply(by: user, to: message, text: try ActivityCommentService.checked(text))
            affected = try await req.messages.message(reply, of: user)
        case "requestDisclosure":
            try await req.buddies.requestDisclosure(user, of: try await req.messages.message(id, of: user), text: text)
            affected = try await req.messages.message(id, of: user)
        default:
            _ = try await req.messages.message(id, of: user)
            throw YonaError(.messageActionNotSupported)
        }
        return try .hal(
            MessageActionResultDTO(
                properties: .init(status: "done"),
                _embedded: ["yona:affectedMessages": [req.rendering.message(affected, of: user, topLevel: false)]]))
    }

    private static func unlockConfirmed(_ req: Request, userID: UUID) async throws -> UnlockedUser {
        let user = try await req.users.unlock(userID: userID, passwordHeader: req.yonaPasswordHeader)
        guard user.isConfirmed else { throw YonaError(.mobileNumberNotConfirmed) }
        return user
    }

    private static func messageID(_ req: Request) throws -> Int64 {
        guard let raw = req.parameters.get("messageID"), let id = Int64(raw), id > 0 else { throw YonaError(.messageNotFound) }
        return id
    }
}
