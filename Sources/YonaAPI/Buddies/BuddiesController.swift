import Foundation
import Vapor
import YonaDomain

/// `/users/{u}/buddies/...`: inviting, listing and removing buddies.
package enum BuddiesController {
    package static func register(_ routes: any RoutesBuilder) {
        let buddies = routes.grouped("users", ":userID", "buddies")
        buddies.get(use: list)
        buddies.post(use: create)
        buddies.get(":buddyID", use: get)
        buddies.put(":buddyID", use: dateRelation)
        buddies.delete(":buddyID", use: delete)
    }

    @Sendable package static func list(req: Request) async throws -> Response {
        let user = try await req.unlockPathUser()
        let sides = try await req.buddySides(of: user)
        let items = user.privateData.buddies.map { req.rendering.buddy($0, of: user, side: sides[$0.id], topLevel: false) }
        return try .hal(HALCollection(rel: "yona:buddies", items: items, links: HALLinks(self: req.rendering.links.buddies(user.id))))
    }

    @Sendable package static func get(req: Request) async throws -> Response {
        let user = try await req.unlockPathUser()
        let buddyID = try req.uuidParameter("buddyID")
        guard let buddy = user.privateData.buddies.first(where: { $0.id == buddyID }) else { throw YonaError(.buddyNotFound) }
        return try .hal(req.rendering.buddy(buddy, of: user, side: try await req.buddySides(of: user, only: buddy.id)[buddy.id], topLevel: true))
    }

    /// Test servers only, as Yona's: `{"lastStatusChangeTime": …}` dates the relation (and so the first day of the
    /// buddy's reports); not before the user's own creation.
    @Sendable package static func dateRelation(req: Request) async throws -> Response {
        guard req.application.yona.config.testServer else { throw YonaError(.methodNotAllowed) }
        let user = try await req.unlockPathUser()
        let buddyID = try req.uuidParameter("buddyID")
        guard user.privateData.buddies.contains(where: { $0.id == buddyID }) else { throw YonaError(.buddyNotFound) }
        let body = try req.decodeStrict(BuddyDatingRequest.self)
        let raw = try requireText(body.lastStatusChangeTime)
        guard let time = YonaDateFormat.parseTimestamp(raw) else { throw YonaError(.invalidJSON) }
        guard UserCalendar.startOfDay(time) >= UserCalendar.startOfDay(user.privateData.creationTime) else {
            throw YonaError(.dateTooEarly, quoting: UserCalendar.day(time))
        }
        let updated = try await req.users.modifyPrivateData(user) { data in
            for index in data.buddies.indices where data.buddies[index].id == buddyID { data.buddies[index].lastStatusChangeTime = time }
        }
        guard let buddy = updated.privateData.buddies.first(where: { $0.id == buddyID }) else { throw YonaError(.buddyNotFound) }
        return try .hal(req.rendering.buddy(buddy, of: updated, side: try await req.buddySides(of: updated, only: buddyID)[buddyID], topLevel: true))
    }

    @Sendable package static func create(req: Request) async throws -> Response {
        let user = try await req.unlockPathUser()
        let body = try req.decodeStrict(BuddyRequestBody.self)
        guard let invited = body._embedded?.user else { throw YonaError(.missingProperty, quoting: "_embedded") }
        let firstName = try PersonName.validated(invited.firstName, or: .firstNameMissing, property: "firstName")
        let lastName = try PersonName.validated(invited.lastName, or: .lastNameMissing, property: "lastName")
        let mobileNumber = try MobileNumber(try requireText(invited.mobileNumber, or: .mobileNumberMissing))
        let emailAddress = try EmailAddress.validated(try requireText(invited.emailAddress, or: .emailAddressMissing))
        try await req.limitBuddyRequests(from: user.id, to: mobileNumber.value)
        let (updated, buddy) = try await req.buddies.request(
            from: user, firstName: firstName, lastName: lastName, mobileNumber: mobileNumber,
            emailAddress: emailAddress, message: body.message,
            sendingStatus: try requireText(body.sendingStatus), receivingStatus: try requireText(body.receivingStatus),
            inviting: req.inviting)
        return try .hal(req.rendering.buddy(buddy, of: updated, side: nil, topLevel: true), status: .created)
    }

    @Sendable package static func delete(req: Request) async throws -> HTTPStatus {
        let user = try await req.unlockPathUser()
        _ = try await req.buddies.remove(
            try req.uuidParameter("buddyID"), of: user, reason: "USER_REMOVED_BUDDY",
            text: req.queryValue("message"))
        return .noContent
    }
}
