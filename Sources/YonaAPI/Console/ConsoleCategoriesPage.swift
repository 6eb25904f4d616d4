import Foundation
import Vapor
import YonaDomain
import YonaStore

/// `/admin/categories`: the activity categories (Yona's admin API, as pages): list, create, edit, and the
/// `categories import` format in and out.
enum ConsoleCategoriesPage {
    static func register(_ pages: any RoutesBuilder) {
        pages.get("categories", use: page)
        pages.post("categories", use: save)
        pages.get("categories", "export", use: export)
        pages.post("categories", "import", use: importing)
    }

    struct Form: Content {
        var id: String?
        var nameEN: String?
        var nameNL: String?
        var descriptionEN: String?
        var descriptionNL: String?
        var classifierCategories: String?
        var applications: String?
        var mandatoryNoGo: String?
    }

    @Sendable static func page(req: Request) async throws -> Response {
        var form = Form()
        if let raw = req.queryValue("edit"), let id = UUID(uuidString: raw), let category = try await ActivityCategory.find(id, on: req.store) {
            form = Form(
                id: raw, nameEN: category.names["en-US"], nameNL: category.names["nl-NL"], descriptionEN: category.descriptions["en-US"],
                descriptionNL: category.descriptions["nl-NL"], classifierCategories: category.classifierCategories.joined(separator: ", "),
                applications: category.applications.joined(separator: ", "), mandatoryNoGo: category.mandatoryNoGo ? "on" : nil)
        }
        return try await render(req, form: form)
    }

    private static func render(_ req: Request, form: Form, status: HTTPStatus = .ok, error: String? = nil) async throws -> Response {
        let categories = try await ActivityCategory.query(on: req.store).all()
            .sorted { ($0.names["en-US"] ?? "") < ($1.names["en-US"] ?? "") }
        let rows = categories.map { category -> HTML in
            let id = category.id?.uuidString.lowercased() ?? ""
            return """
                <tr><td>\(category.names["en-US"] ?? "")</td><td>\(category.names["nl-NL"] ?? "")</td>
                <td>\(category.classifierCategories.joined(separator: ", "))</td><td>\(category.applications.joined(separator: ", "))</td>
                <td>\(category.mandatoryNoGo ? "yes" : "no")</td>
                <td><a href="/admin/categories?edit=\(id)" aria-label="Edit \(category.names["en-US"] ?? "")">Edit</a></td></tr>
                """
        }
        let editing = form.id != nil
        let checked: HTML = form.mandatoryNoGo == "on" ? " checked" : ""
        return ConsolePage.render(
            req, title: "Activity categories", status: status, error: error,
            """
            <table><thead><tr><th scope="col">English</th><th scope="col">Dutch</th><th scope="col">Classifier categories</th>
            <th scope="col">Apps</th><th scope="col">Mandatory no-go</th><th scope="col">Action</th></tr></thead><tbody>\(rows)</tbody></table>
            <h2>\(editing ? "Edit the category" : "New category")</h2>
            <form method="post" action="/admin/categories">\(ConsolePage.csrfField(req))
            <input type="hidden" name="id" value="\(form.id ?? "")">
            <label for="nameEN">Name in English</label><input type="text" id="nameEN" name="nameEN" value="\(form.nameEN ?? "")" required>
            <label for="nameNL">Name in Dutch</label><input type="text" id="nameNL" name="nameNL" value="\(form.nameNL ?? "")">
            <label for="descriptionEN">Description in English</label>
            <textarea id="descriptionEN" name="descriptionEN">\(form.descriptionEN ?? "")</textarea>
            <label for="descriptionNL">Description in Dutch</label>
            <textarea id="descriptionNL" name="descriptionNL">\(form.descriptionNL ?? "")</textarea>
            <label for="classifierCategories">Classifier categories (comma-separated)</label>
            <input type="text" id="classifierCategories" name="classifierCategories" value="\(form.classifierCategories ?? "")" required>
            <label for="applications">Apps (comma-separated)</label>
            <input type="text" id="applications" name="applications" value="\(form.applications ?? "")">
            <p><input type="checkbox" id="mandatoryNoGo" name="mandatoryNoGo"\(checked)>
            <label for="mandatoryNoGo" class="inline">Mandatory no-go goal for every user</label></p>
            <button type="submit">\(editing ? "Save the category" : "Create the category")</button></form>
            <h2>Import and export</h2>
            <p><a href="/admin/categories/export">Export every category</a> (JSON, the format of <code>yona-server categories import</code>).</p>
            <form method="post" action="/admin/categories/import">\(ConsolePage.csrfField(req))
            <label for="json">Categories to import (a JSON array in that format)</label>
            <textarea id="json" name="json" required></textarea>
            <button type="submit">Import</button></form>
            """)
    }

    @Sendable static func save(req: Request) async throws -> Response {
        let form = (try? req.content.decode(Form.self)) ?? Form()
        func list(_ raw: String?) -> [String] {
            (raw ?? "").split(whereSeparator: { $0 == "," || $0.isNewline }).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
        }
        func texts(_ english: String?, _ dutch: String?) -> [String: String] {
            var texts: [String: String] = [:]
            if let english = english?.trimmingCharacters(in: .whitespacesAndNewlines), !english.isEmpty { texts["en-US"] = english }
            if let dutch = dutch?.trimmingCharacters(in: .whitespacesAndNewlines), !dutch.isEmpty { texts["nl-NL"] = dutch }
            return texts
        }
        let names = texts(form.nameEN, form.nameNL)
        let classifier = list(form.classifierCategories)
        guard names["en-US"] != nil, !classifier.isEmpty else {
            return try await render(req, form: form, status: .badRequest, error: "A category needs an English name and a classifier category.")
        }
        var existing: ActivityCategory?
        if let raw = form.id, !raw.isEmpty {
            guard let id = UUID(uuidString: raw), let found = try await ActivityCategory.find(id, on: req.store) else {
                return try await render(req, form: Form(), status: .notFound, error: "That category does not exist any more.")
            }
            existing = found
        }
        let category = ActivityCategory(
            id: existing?.id ?? UUID(), names: names, descriptions: texts(form.descriptionEN, form.descriptionNL),
            classifierCategories: classifier, applications: list(form.applications), mandatoryNoGo: form.mandatoryNoGo == "on")
        do {
            try await AdminActivityCategoriesController.checkNamesAreFree(category, on: req.store)
        } catch let error as YonaError {
            return try await render(req, form: form, status: .badRequest, error: ConsolePage.message(of: error))
        }
        if let existing {
            existing.adopt(category)
            try await existing.save(on: req.store)
        } else {
            try await category.create(on: req.store)
        }
        return ConsolePage.redirect("/admin/categories", notice: "category-saved")
    }

    @Sendable static func export(req: Request) async throws -> Response {
        let response = Response(status: .ok, body: .init(data: try await ActivityCategoryImport.export(on: req.store)))
        response.headers.replaceOrAdd(name: .contentType, value: "application/json")
        response.headers.replaceOrAdd(name: .contentDisposition, value: "attachment; filename=\"activity-categories.json\"")
        ConsolePage.secure(response)
        return response
    }

    @Sendable static func importing(req: Request) async throws -> Response {
        let json = (try? req.content.get(String.self, at: "json")) ?? ""
        do {
            let entries = try ActivityCategoryImport.parse(Data(json.utf8))
            _ = try await ActivityCategoryImport.apply(entries, on: req.store)
        } catch let problem as ActivityCategoryImport.Problem {
            return try await render(req, form: Form(), status: .badRequest, error: "Nothing was imported: \(problem.description).")
        }
        return ConsolePage.redirect("/admin/categories", notice: "categories-imported")
    }
}
