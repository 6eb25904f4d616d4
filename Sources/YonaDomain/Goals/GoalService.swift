import FluentKit
import Foundation
import SQLKit
import YonaStore

/// Goals live on the anonymized side; the user reaches them through the anonymized id in the private data.
package struct GoalService: Sendable {
    package let db: any Database

    package func goals(of user: UnlockedUser) async throws -> [Goal] {
        try await goals(ofAnonymizedUsers: [user.privateData.userAnonymizedID])
    }

    /// The goals of several anonymized users (a user's, or a user's buddies', through the ids their data holds).
    package func goals(ofAnonymizedUsers ids: [UUID]) async throws -> [Goal] {
        guard !ids.isEmpty else { return [] }
        // Raw SQL: read on every profile, buddy and goal list; Fluent decoded each goal and each whole category (with
        // its localized names) per row, where the rendering needs one flag of the category.
        return try await db.sql.raw(
            """
            SELECT g.id, g.user_anonymized_id, g.activity_category_id, g.creation_time, g.kind, g.max_duration_minutes, g.zones,
            c.mandatory_no_go FROM \(unsafeRaw: Goal.schema) g JOIN \(unsafeRaw: ActivityCategory.schema) c ON c.id = g.activity_category_id
            WHERE g.user_anonymized_id IN (\(binds: ids)) ORDER BY g.creation_time
            """
        ).all().map { row in
            let goal = Goal(
                id: try row.decode(column: "id", as: UUID.self), userAnonymizedID: try row.decode(column: "user_anonymized_id", as: UUID.self),
                activityCategoryID: try row.decode(column: "activity_category_id", as: UUID.self),
                kind: try row.decode(column: "kind", as: String.self),
                maxDurationMinutes: try row.decode(column: "max_duration_minutes", as: Int?.self),
                zones: try row.decode(column: "zones", as: [String].self), creationTime: try row.decode(column: "creation_time", as: Date.self))
            goal.$id.exists = true
            goal.onMandatoryCategory = try row.decode(column: "mandatory_no_go", as: Bool.self)
            return goal
        }
    }

    /// The goals of several anonymized users with their history items, in one round trip (every profile read, and
    /// every buddy and goal list, needs both): each goal once per history item it has, or once without one. Goals
    /// oldest first; history items oldest first, each with the anonymized user whose goal it was.
    package func goalsWithHistory(ofAnonymizedUsers ids: [UUID]) async throws
        -> (goals: [Goal], history: [(item: GoalHistoryItem, userAnonymizedID: UUID)])
    {
        guard !ids.isEmpty else { return ([], []) }
        var goals: [Goal] = []
        var history: [(item: GoalHistoryItem, userAnonymizedID: UUID)] = []
        for row in try await db.sql.raw(
            """
            SELECT g.id, g.user_anonymized_id, g.activity_category_id, g.creation_time, g.kind, g.max_duration_minutes, g.zones,
            c.mandatory_no_go, h.id AS h_id, h.activity_category_id AS h_category, h.creation_time AS h_creation_time,
            h.end_time AS h_end_time, h.kind AS h_kind, h.max_duration_minutes AS h_max_duration_minutes, h.zones AS h_zones
            FROM \(unsafeRaw: Goal.schema) g JOIN \(unsafeRaw: ActivityCategory.schema) c ON c.id = g.activity_category_id
            LEFT JOIN \(unsafeRaw: GoalHistoryItem.schema) h ON h.goal_id = g.id
            WHERE g.user_anonymized_id IN (\(binds: ids)) ORDER BY g.creation_time, g.id, h.creation_time
            """
        ).all() {
            let id = try row.decode(column: "id", as: UUID.self)
            let owner = try row.decode(column: "user_anonymized_id", as: UUID.self)
            if goals.last?.id != id {
                let goal = Goal(
                    id: id, userAnonymizedID: owner, activityCategoryID: try row.decode(column: "activity_category_id", as: UUID.self),
                    kind: try row.decode(column: "kind", as: String.self),
                    maxDurationMinutes: try row.decode(column: "max_duration_minutes", as: Int?.self),
                    zones: try row.decode(column: "zones", as: [String].self), creationTime: try row.decode(column: "creation_time", as: Date.self))
                goal.$id.exists = true
                goal.onMandatoryCategory = try row.decode(column: "mandatory_no_go", as: Bool.self)
                goals.append(goal)
            }
            guard let itemID = try row.decode(column: "h_id", as: UUID?.self) else { continue }
            let item = GoalHistoryItem()
            item.id = itemID
            item.$id.exists = true
            item.$goal.id = id
            item.$activityCategory.id = try row.decode(column: "h_category", as: UUID.self)
            item.creationTime = try row.decode(column: "h_creation_time", as: Date.self)
            item.endTime = try row.decode(column: "h_end_time", as: Date.self)
            item.kind = try row.decode(column: "h_kind", as: String.self)
            item.maxDurationMinutes = try row.decode(column: "h_max_duration_minutes", as: Int?.self)
            item.zones = try row.decode(column: "h_zones", as: [String].self)
            history.append((item, owner))
        }
        history.sort { $0.item.creationTime < $1.item.creationTime }
        return (goals, history)
    }

    package func goal(_ goalID: UUID, of user: UnlockedUser) async throws -> Goal {
        guard
            let goal = try await Goal.query(on: db).filter(\.$id == goalID)
                .filter(\.$userAnonymized.$id == user.privateData.userAnonymizedID)
                .with(\.$activityCategory).first()
        else {
            throw YonaError(.goalNotFound)
        }
        return goal
    }

    /// Adds a goal; one goal per activity category. `text` is what the user wrote to the buddies.
    package func add(_ spec: GoalSpec, categoryID: UUID, to user: UnlockedUser, creationTime: Date = Date(), text: String? = nil) async throws -> Goal
    {
        guard try await ActivityCategory.find(categoryID, on: db) != nil else { throw YonaError(.activityCategoryNotFound) }
        let anonymizedID = user.privateData.userAnonymizedID
        if try await Goal.query(on: db).filter(\.$userAnonymized.$id == anonymizedID)
            .filter(\.$activityCategory.$id == categoryID).count() > 0
        {
            throw YonaError(.secondGoalOnActivityCategory)
        }
        let goal = Self.make(spec, id: UUID(), userAnonymizedID: anonymizedID, categoryID: categoryID, creationTime: creationTime)
        do {
            try await db.transaction { tx in
                try await goal.create(on: tx)
                try await Self.announce(.added, goal: goal, of: user, text: text, on: tx)
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw YonaError(.secondGoalOnActivityCategory)
        }
        return try await self.goal(goal.id!, of: user)
    }

    /// Changes a goal's budget or zones, as Yona: the version it replaces is kept as a history item ending when the
    /// new one starts (`changeTime`, a test server's past time, or now); a change that changes nothing is no change.
    /// A goal keeps its type and category; a mandatory no-go goal cannot be relaxed.
    package func update(
        _ goalID: UUID, of user: UnlockedUser, to spec: GoalSpec, categoryID: UUID, changeTime: Date? = nil,
        text: String? = nil
    ) async throws -> Goal {
        let goal = try await goal(goalID, of: user)
        guard goal.kind == spec.type else { throw YonaError(.cannotChangeGoalType) }
        guard goal.$activityCategory.id == categoryID else { throw YonaError(.cannotChangeGoalActivityCategory) }
        if goal.activityCategory.mandatoryNoGo && !spec.isNoGo { throw YonaError(.cannotRemoveMandatoryGoal) }
        guard spec != goal.spec else {
            // Only a (test server's) new time: the goal is re-dated, nobody is told. As Yona's `setGoalCreationTime`,
            // earlier is allowed, though not before the account.
            if let changeTime {
                guard changeTime >= user.privateData.creationTime else { throw YonaError(.goalUpdateBeforeOriginal) }
                goal.creationTime = changeTime
                try await goal.save(on: db)
            }
            return goal
        }
        if let changeTime, changeTime < goal.creationTime { throw YonaError(.goalUpdateBeforeOriginal) }
        let effective = changeTime ?? Date()
        try await db.transaction { tx in
            try await GoalHistoryItem(of: goal, endTime: effective).create(on: tx)
            Self.apply(spec, to: goal)
            goal.creationTime = effective
            try await goal.save(on: tx)
            try await Self.announce(.changed, goal: goal, of: user, text: text, on: tx)
        }
        return goal
    }

    package func delete(_ goalID: UUID, of user: UnlockedUser, text: String? = nil) async throws {
        let goal = try await goal(goalID, of: user)
        guard !goal.activityCategory.mandatoryNoGo else { throw YonaError(.cannotRemoveMandatoryGoal) }
        try await db.transaction { tx in
            try await Self.announce(.deleted, goal: goal, of: user, text: text, on: tx)
            // Its goal conflicts go with it, in the user's inbox and the buddies' (Yona's EditGoalsTest).
            try await MessageWriter.deleteWithCopies(try await Message.query(on: tx).filter(\.$goalID == goalID).all(\.$id), on: tx)
            try await GoalHistoryItem.query(on: tx).filter(\.$goal.$id == goalID).delete()
            try await goal.delete(on: tx)
        }
    }

    private static func apply(_ spec: GoalSpec, to goal: Goal) {
        goal.kind = spec.type
        switch spec {
        case .budget(let minutes):
            goal.maxDurationMinutes = minutes
            goal.zones = []
        case .timeZone(let zones):
            goal.maxDurationMinutes = nil
            goal.zones = zones
        }
    }

    package enum Change: String {
        case added = "GOAL_ADDED"
        case changed = "GOAL_CHANGED"
        case deleted = "GOAL_DELETED"
    }

    /// Goal changes are announced to buddies (api.md).
    private static func announce(_ change: Change, goal: Goal, of user: UnlockedUser, text: String?, on tx: any Database) async throws {
        try await BuddyService.announce(user, on: tx) { id in
            MessagePayload(
                kind: .goalChange, messageID: id, subjectUserAnonymizedID: user.privateData.userAnonymizedID,
                activityCategoryID: goal.$activityCategory.id, goalID: goal.id, text: text, change: change.rawValue)
        }
    }

    /// The no-go goals every new user gets (inside the user-creation transaction).
    package static func mandatoryGoals(for userAnonymizedID: UUID, on db: any Database) async throws -> [Goal] {
        try await ActivityCategory.query(on: db).filter(\.$mandatoryNoGo == true).all().map { category in
            make(
                .budget(maxDurationMinutes: 0), id: UUID(), userAnonymizedID: userAnonymizedID, categoryID: category.id!,
                creationTime: Goal.mandatoryCreationTime)
        }
    }

    package static func make(_ spec: GoalSpec, id: UUID, userAnonymizedID: UUID, categoryID: UUID, creationTime: Date) -> Goal {
        switch spec {
        case .budget(let minutes):
            Goal(
                id: id, userAnonymizedID: userAnonymizedID, activityCategoryID: categoryID, kind: spec.type,
                maxDurationMinutes: minutes, zones: [], creationTime: creationTime)
        case .timeZone(let zones):
            Goal(
                id: id, userAnonymizedID: userAnonymizedID, activityCategoryID: categoryID, kind: spec.type,
                maxDurationMinutes: nil, zones: zones, creationTime: creationTime)
        }
    }

    package init(db: any Database) {
        self.db = db
    }
}
