import Foundation
import Vapor
import YonaDomain

/// `/users/{u}/goals/...`: budget and time-zone goals; 0 minutes is a no-go goal.
package enum GoalsController {
    package static func register(_ routes: any RoutesBuilder) {
        let goals = routes.grouped("users", ":userID", "goals")
        goals.get(use: list)
        goals.post(use: create)
        goals.get(":goalID", use: get)
        goals.put(":goalID", use: update)
        goals.delete(":goalID", use: delete)
    }

    @Sendable package static func list(req: Request) async throws -> Response {
        if let (requester, buddy, side) = try await buddyGoals(req) {
            let items =
                side.goals.map { req.rendering.goal($0, ownerID: buddy.userID, editable: false, topLevel: false, requestingUserID: requester.id) }
                + side.history.map { req.rendering.goal($0, ownerID: buddy.userID, requestingUserID: requester.id) }
            let links = req.rendering.links
            return try .hal(
                HALCollection(
                    rel: "yona:goals", items: items,
                    links: HALLinks(self: links.asRequester(links.goals(buddy.userID), requester.id))))
        }
        let user = try await req.unlockPathUser()
        let (goals, history) = try await req.goals.goalsWithHistory(ofAnonymizedUsers: [user.privateData.userAnonymizedID])
        let items = req.rendering.goalItems(goals: goals, history: history.map(\.item), of: user)
        return try .hal(
            HALCollection(
                rel: "yona:goals", items: items, links: HALLinks(self: req.rendering.links.asRequester(req.rendering.links.goals(user.id), user.id))))
    }

    @Sendable package static func get(req: Request) async throws -> Response {
        if let (requester, buddy, side) = try await buddyGoals(req) {
            let goalID = try req.uuidParameter("goalID")
            if let goal = side.goals.first(where: { $0.id == goalID }) {
                return try .hal(req.rendering.goal(goal, ownerID: buddy.userID, editable: false, topLevel: true, requestingUserID: requester.id))
            }
            // A buddy's earlier goal version is reachable by the self link its goal list gives it (Yona's
            // getGoalsIncludingHistoryItems); one's own is not, as in Yona.
            guard let item = side.history.first(where: { $0.id == goalID }) else { throw YonaError(.goalNotFound) }
            return try .hal(req.rendering.goal(item, ownerID: buddy.userID, requestingUserID: requester.id, topLevel: true))
        }
        let user = try await req.unlockPathUser()
        return try .hal(req.rendering.goal(try await req.goals.goal(try req.uuidParameter("goalID"), of: user), of: user, topLevel: true))
    }

    /// A buddy's goals (`?requestingUserId=` another user, with that user's password), as Yona's buddy views link
    /// them; nil when the path user asks for their own.
    private static func buddyGoals(_ req: Request) async throws -> (UnlockedUser, PrivateBuddy, BuddySide)? {
        let userID = try req.uuidParameter("userID")
        guard let requestingUserID = try req.optionalUUIDQuery("requestingUserId"), requestingUserID != userID else { return nil }
        let requester = try await req.users.unlock(userID: requestingUserID, passwordHeader: req.yonaPasswordHeader)
        guard let buddy = requester.privateData.buddies.first(where: { $0.userID == userID }),
            let side = try await req.buddySides(of: requester, only: buddy.id)[buddy.id]
        else {
            throw YonaError(.buddyNotFoundForUser)
        }
        return (requester, buddy, side)
    }

    @Sendable package static func create(req: Request) async throws -> Response {
        let user = try await req.unlockPathUser()
        let body = try req.decodeStrict(GoalRequest.self)
        let goal = try await req.goals.add(
            try body.spec(), categoryID: try body.categoryID(), to: user,
            creationTime: try body.creationTime(testServer: req.application.yona.config.testServer) ?? Date(),
            text: req.queryValue("message"))
        return try .hal(req.rendering.goal(goal, of: user, topLevel: true), status: .created)
    }

    @Sendable package static func update(req: Request) async throws -> Response {
        let user = try await req.unlockPathUser()
        let goalID = try req.uuidParameter("goalID")
        let body = try req.decodeStrict(GoalRequest.self)
        let goal = try await req.goals.update(
            goalID, of: user, to: try body.spec(), categoryID: try body.categoryID(),
            changeTime: try body.creationTime(testServer: req.application.yona.config.testServer),
            text: req.queryValue("message"))
        return try .hal(req.rendering.goal(goal, of: user, topLevel: true))
    }

    @Sendable package static func delete(req: Request) async throws -> HTTPStatus {
        let user = try await req.unlockPathUser()
        try await req.goals.delete(try req.uuidParameter("goalID"), of: user, text: req.queryValue("message"))
        return .noContent
    }
}
