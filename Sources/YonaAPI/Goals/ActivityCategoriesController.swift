import Fluent
import Foundation
import Vapor
import YonaDomain
import YonaStore

/// `GET /activityCategories/...`: public, localized.
package enum ActivityCategoriesController {
    package static func register(_ routes: any RoutesBuilder) {
        let categories = routes.grouped("activityCategories")
        categories.get(use: list)
        categories.get(":categoryID", use: get)
    }

    @Sendable package static func list(req: Request) async throws -> Response {
        let items = try await ActivityCategory.query(on: req.store).all()
            .sorted { $0.names[YonaLocale.fallback.rawValue] ?? "" < $1.names[YonaLocale.fallback.rawValue] ?? "" }
            .map { req.rendering.activityCategory($0, locale: req.context.locale, topLevel: false) }
        return try .hal(
            HALCollection(
                rel: "yona:activityCategories", items: items,
                links: HALLinks(self: req.rendering.links.activityCategories())))
    }

    @Sendable package static func get(req: Request) async throws -> Response {
        guard let category = try await ActivityCategory.find(try req.uuidParameter("categoryID"), on: req.store) else {
            throw YonaError(.activityCategoryNotFound)
        }
        return try .hal(req.rendering.activityCategory(category, locale: req.context.locale, topLevel: true))
    }
}

/// `/admin/activityCategories/...`: the operator edits the set (internal token).
package enum AdminActivityCategoriesController {
    package static func register(_ routes: any RoutesBuilder) {
        let categories = routes.grouped("activityCategories")
        categories.get(use: list)
        categories.post(use: create)
        categories.get(":categoryID", use: get)
        categories.put(":categoryID", use: update)
        categories.delete(":categoryID", use: delete)
    }

    @Sendable package static func list(req: Request) async throws -> Response {
        let items = try await ActivityCategory.query(on: req.store).all().map { req.rendering.adminActivityCategory($0, topLevel: false) }
        return try .hal(
            HALCollection(
                rel: "yona:activityCategories", items: items,
                links: HALLinks(self: req.rendering.links.adminActivityCategories())))
    }

    @Sendable package static func get(req: Request) async throws -> Response {
        try .hal(req.rendering.adminActivityCategory(try await find(req), topLevel: true))
    }

    @Sendable package static func create(req: Request) async throws -> Response {
        let category = try req.decodeStrict(ActivityCategoryRequest.self).toModel(id: UUID())
        try await checkNamesAreFree(category, on: req.store)
        try await category.create(on: req.store)
        // Yona's admin service answers a creation with 200.
        return try .hal(req.rendering.adminActivityCategory(category, topLevel: true))
    }

    @Sendable package static func update(req: Request) async throws -> Response {
        let existing = try await find(req)
        let changed = try req.decodeStrict(ActivityCategoryRequest.self).toModel(id: existing.id!)
        try await checkNamesAreFree(changed, on: req.store)
        existing.adopt(changed)
        try await existing.save(on: req.store)
        return try .hal(req.rendering.adminActivityCategory(existing, topLevel: true))
    }

    @Sendable package static func delete(req: Request) async throws -> HTTPStatus {
        try await find(req).delete(on: req.store)
        return .noContent
    }

    /// No two categories share a name in any language (Yona's `error.activitycategory.duplicate.name`).
    package static func checkNamesAreFree(_ category: ActivityCategory, on db: any Database) async throws {
        for other in try await ActivityCategory.query(on: db).all() where other.id != category.id {
            for (locale, name) in category.names where other.names[locale]?.caseInsensitiveCompare(name) == .orderedSame {
                throw YonaError(.duplicateActivityCategoryName)
            }
        }
    }

    private static func find(_ req: Request) async throws -> ActivityCategory {
        guard let category = try await ActivityCategory.find(try req.uuidParameter("categoryID"), on: req.store) else {
            throw YonaError(.activityCategoryNotFound)
        }
        return category
    }
}
