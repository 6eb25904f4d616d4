"""Drives the operator's console in a real headless Chromium (Debian's chromium and chromedriver, through Selenium).

    console_browser.py act    BASE TOKEN SHOTS NUMBER CATEGORY_EN CATEGORY_NL ANNOUNCEMENT
    console_browser.py scan   BASE TOKEN SHOTS LOST_NUMBER
    console_browser.py expire BASE TOKEN SECONDS

Prints one JSON object of what the browser saw; the Swift test (ConsoleTests) decides what is right.
"""
import json
import os
import sys
import time
from urllib.parse import urlparse

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

PAGES = ["/admin/", "/admin/categories", "/admin/announcements", "/admin/white-list", "/admin/lost-phone"]


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("YONA_TEST_CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,1400"):
        options.add_argument(argument)
    service = Service(os.environ.get("YONA_TEST_CHROMEDRIVER", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(60)
    return driver


def navigating(driver, action):
    """Does what leaves the page (a click, Enter in a form) and waits until the next document has loaded: read too
    early, the old page's elements go stale under it (the whole suite runs on two cores). The old document is marked
    with a variable the new one does not have; element handles are not used for the wait, since Chromium answers for a
    node of a document being replaced with an error Selenium's staleness check does not expect."""
    driver.execute_script("window.yonaLeaving = true")
    action()

    def arrived(d):
        try:
            return d.execute_script("return window.yonaLeaving === undefined && document.readyState === 'complete'")
        except WebDriverException:
            return False  # between two documents

    WebDriverWait(driver, 60).until(arrived)


def click(driver, xpath):
    navigating(driver, lambda: driver.find_element(By.XPATH, xpath).click())


def text_of(driver, selector):
    found = driver.find_elements(By.CSS_SELECTOR, selector)
    return found[0].text if found else None


def seen(driver):
    """What a page shows: its path, heading, notice and error."""
    return {
        "path": urlparse(driver.current_url).path,
        "title": driver.title,
        "h1": text_of(driver, "h1"),
        "notice": text_of(driver, ".notice"),
        "error": text_of(driver, ".error"),
    }


def sign_in(driver, base, token):
    driver.get(base + "/admin/")
    field = driver.find_element(By.ID, "token")
    field.send_keys(token)
    navigating(driver, lambda: field.send_keys(Keys.ENTER))  # the keyboard alone signs in


def submit(driver, form_action, fields, button=None):
    form = driver.find_element(By.CSS_SELECTOR, 'form[action="%s"]' % form_action)
    for name, value in fields.items():
        element = form.find_element(By.NAME, name)
        if element.get_attribute("type") == "checkbox":
            if bool(value) != element.is_selected():
                element.click()
        else:
            element.clear()
            element.send_keys(value)
    target = form.find_element(By.XPATH, ".//button[normalize-space()='%s']" % button) if button else form.find_element(By.TAG_NAME, "button")
    navigating(driver, target.click)


def act(base, token, shots, number, category_en, category_nl, announcement):
    driver = browser()
    report = {}
    try:
        driver.get(base + "/admin/")
        report["unsigned"] = seen(driver)
        driver.save_screenshot(os.path.join(shots, "sign-in.png"))
        navigating(driver, lambda: driver.find_element(By.ID, "token").send_keys("not-the-token" + Keys.ENTER))
        report["wrongToken"] = seen(driver)
        sign_in(driver, base, token)
        report["signedIn"] = seen(driver)
        cookie = driver.get_cookie("yona_console") or {}
        report["cookie"] = {"httpOnly": cookie.get("httpOnly"), "sameSite": cookie.get("sameSite"), "path": cookie.get("path")}

        driver.get(base + "/admin/white-list")
        submit(driver, "/admin/white-list", {"mobileNumber": number})
        report["numberAdded"] = seen(driver)
        report["whiteListText"] = driver.find_element(By.TAG_NAME, "main").text
        submit(driver, "/admin/white-list", {"mobileNumber": "0612345678"})
        report["badNumber"] = seen(driver)

        driver.get(base + "/admin/categories")
        submit(driver, "/admin/categories", {
            "nameEN": category_en, "nameNL": category_nl, "descriptionEN": "Walks in the hills",
            "classifierCategories": "hiking, trails", "applications": "TrailApp", "mandatoryNoGo": False,
        })
        report["categorySaved"] = seen(driver)
        navigating(driver, driver.find_element(By.CSS_SELECTOR, 'a[aria-label="Edit %s"]' % category_en).click)
        submit(driver, "/admin/categories", {"nameNL": category_nl + " en klimmen"}, button="Save the category")
        report["categoryEdited"] = seen(driver)
        report["categoriesText"] = driver.find_element(By.TAG_NAME, "main").text
        imported = [{"localizableName": {"en-US": "Imported Birding", "nl-NL": "Vogels kijken"}, "smoothwallCategories": ["birding"]}]
        submit(driver, "/admin/categories/import", {"json": json.dumps(imported)})
        report["imported"] = seen(driver)
        submit(driver, "/admin/categories/import", {"json": '[{"localizableName": {"en-US": "No classifier"}}]'})
        report["badImport"] = seen(driver)

        driver.get(base + "/admin/announcements")
        submit(driver, "/admin/announcements/preview", {"textEN": announcement, "textNL": "Vannacht onderhoud"})
        report["preview"] = seen(driver)
        report["previewText"] = text_of(driver, "section")
        click(driver, "//button[normalize-space()='Send to every user']")
        report["announcementSent"] = seen(driver)
        report["announcementsText"] = driver.find_element(By.TAG_NAME, "main").text

        # the attack: a form posted with the session's cookie but without the CSRF token
        driver.get(base + "/admin/white-list")
        driver.execute_script(
            "document.querySelectorAll('form[action=\"/admin/white-list\"] input[name=csrf]').forEach(function (e) { e.remove(); })")
        submit(driver, "/admin/white-list", {"mobileNumber": "+31699999999"})
        report["withoutCSRF"] = seen(driver)

        driver.get(base + "/admin/")
        click(driver, "//button[normalize-space()='Sign out']")
        report["signedOut"] = seen(driver)
        driver.get(base + "/admin/categories")
        report["afterSignOut"] = seen(driver)
    finally:
        driver.quit()
    print(json.dumps(report))


def scan(base, token, shots, lost_number):
    driver = browser()
    pages = {}
    unlabeled = {}
    expired = None
    lost = None
    try:
        sign_in(driver, base, token)
        # the last task: the announcement sent earlier is expired early
        driver.get(base + "/admin/announcements")
        click(driver, "//button[normalize-space()='Expire now']")
        expired = seen(driver)
        # and a lost-phone recovery is started for a number
        driver.get(base + "/admin/lost-phone")
        submit(driver, "/admin/lost-phone", {"mobileNumber": lost_number})
        lost = seen(driver)
        for path in PAGES:
            driver.get(base + path)
            pages[path] = driver.page_source
            name = path.strip("/").split("/")[-1]
            driver.save_screenshot(os.path.join(shots, ("dashboard" if name == "admin" else name) + ".png"))
            missing = []
            for field in driver.find_elements(By.CSS_SELECTOR, "input:not([type=hidden]), textarea"):
                ident = field.get_attribute("id")
                if not ident or not driver.find_elements(By.CSS_SELECTOR, 'label[for="%s"]' % ident):
                    missing.append(field.get_attribute("name"))
            unlabeled[path] = missing
    finally:
        driver.quit()
    print(json.dumps({"pages": pages, "unlabeled": unlabeled, "expired": expired, "lostPhone": lost}))


def expire(base, token, seconds):
    driver = browser()
    try:
        sign_in(driver, base, token)
        before = seen(driver)
        time.sleep(float(seconds))
        driver.get(base + "/admin/categories")
        after = seen(driver)
    finally:
        driver.quit()
    print(json.dumps({"before": before, "after": after}))


if __name__ == "__main__":
    mode, arguments = sys.argv[1], sys.argv[2:]
    {"act": act, "scan": scan, "expire": expire}[mode](*arguments)
