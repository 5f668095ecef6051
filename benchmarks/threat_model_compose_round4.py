"""Training rows for the threat model, fourth round: short neutral status and summary lines.

Imported by ``benchmarks/threat_model_compose.py`` (its last block of rows, after the third
round's, so every earlier row is unchanged). The third round's model flagged the product's
own summary lines (a fallback sentence, "All migrations were read."): no training row was
a short, neutral line of the kind status reports, handoff summaries, changelogs, to-do
lists and meeting notes are made of, so a terse past-tense statement sat nearer the
attacks than the notes. These rows are that register, written fresh for this file:

- status reports and handoff lines (what was done, what is open, what was decided),
  numbered action lists and file lists in a log-like layout, changelog entries, to-do
  lines, meeting notes and minutes;
- lines that name sensitive things neutrally (a path under ``/etc``, a password field, a
  token that was rotated, ``role`` and ``system`` as field values), and messages that
  software addresses to its user ("Your changes have been saved.");
- the same registers in 13 languages other than English.

They are not the product's lines: ``benchmarks/threat_product_lines.py`` collects those as
a validation set, and a test checks that no row here is one of them. Everything here was
written for this project; no public text is copied.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from itertools import product

Add = Callable[[str, str, str, str], None]

# fmt: off
# --- status reports and handoff lines, written one by one ----------------------------------
STATUS = [
    "Build 412 is green on all three runners.",
    "The nightly export finished at 03:12 without errors.",
    "Staging now runs the release candidate from Tuesday.",
    "Both reviewers approved the pull request; it is waiting for the merge window.",
    "The flaky login test passed twenty times in a row after the retry fix.",
    "Disk usage on the build host is back under 60%.",
    "The search index was rebuilt overnight and answers in under 40 ms again.",
    "All four services came back up after the restart.",
    "Coverage went from 71% to 78% with the new parser tests.",
    "The backup job ran, but the upload to cold storage timed out twice.",
    "Nothing changed in the billing module this sprint.",
    "The migration to the new queue is about half done.",
    "Three of the five endpoints return the new error format.",
    "The dependency upgrade broke two snapshot tests; both were updated.",
    "Load test: p95 latency 220 ms at 500 requests per second.",
    "The customer import is paused until the CSV encoding question is settled.",
    "Logs from last night show no failed payments.",
    "The docs build warns about one broken link in the FAQ.",
    "Version 2.3.1 is tagged and published.",
    "Rollback was not needed; the canary stayed healthy for an hour.",
    "The report generator now handles empty months.",
    "Memory use of the worker dropped by a third after the cache change.",
    "The linter is clean on the whole repository.",
    "Two tickets were closed as duplicates of the timezone bug.",
    "The schema check found one column without an index.",
    "The cron job was moved from 02:00 to 04:30 to avoid the backup window.",
    "Tests pass locally; CI is still running.",
    "The new API key for the mapping service works in staging.",
    "The old feature flag was removed from the code and the config.",
    "Everything in the checklist is done except the release notes.",
    "The PDF export still renders tables one column too wide.",
    "The patch applies cleanly on the 1.x branch.",
    "No regressions in the benchmark suite.",
    "The database was vacuumed and analysed; queries are fast again.",
    "The certificate for the internal dashboard was renewed until March.",
    "The build cache hit rate is 92% this week.",
    "The translation files were regenerated; 14 strings are new.",
    "The crash reported on Android 12 could not be reproduced.",
    "Every config file now has a comment header.",
    "The outage lasted eleven minutes and affected only the upload page.",
    "The on-call handover happened at 9:00; no open incidents.",
    "The draft of the design doc is in the shared folder.",
    "The first half of the log files were read; the rest are still compressed.",
    "The earlier part of the discussion was trimmed to keep the thread short.",
    "The older chat history was archived; the last twenty messages remain.",
    "No digest was written for this batch; the raw files are kept.",
    "Part of the output was cut because it exceeded the size limit.",
    "Some earlier steps are recorded only in the session log.",
    "The thread was shortened, and the first request is still at the top.",
    "Eight older entries were pruned from the cache.",
    "The tool output was shortened to its first and last hundred lines.",
    "The notes from Monday were merged into this summary.",
    "The previous report is superseded by this one.",
    "This checkpoint replaces the one from yesterday.",
    "The agent stopped after the third failed attempt.",
    "The script exited with code 0 and printed nothing.",
    "The command printed 48 lines, most of them warnings.",
    "The file was opened but not changed.",
    "The directory listing shows nine Python files and a README.",
    "The grep for the old function name found no matches.",
    "The test run ended with 212 passed, 3 skipped.",
    "The compiler reported one error in utils.c line 88.",
    "The container image is 180 MB smaller after the cleanup.",
    "The health check returns 200 again.",
    "The retry loop gave up after five attempts.",
    "The request timed out after 30 seconds.",
    "The parser accepts the new date format.",
    "The server answered 404 for the old route, as expected.",
    "The upload finished; checksum matches.",
    "The queue is empty and the workers are idle.",
]

HANDOFF = [
    "Goal: a CSV importer that skips duplicate rows.",
    "Current task: finish the error messages of the importer.",
    "Done so far: read the schema, fixed two typos in the loader, added a test.",
    "In progress: the retry logic for failed uploads.",
    "Open question: does the export need pagination?",
    "Blocked: the staging database is read-only until Monday.",
    "Decision: keep SQLite for the prototype and revisit later.",
    "Decided to drop Python 3.8 support in the next minor release.",
    "Files touched: src/importer.py (edited), tests/test_importer.py (new).",
    "Next: wire the new option into the command line.",
    "Remaining: docs for the new flag and a changelog entry.",
    "State: branch feature/import-dedupe, two commits ahead of main.",
    "Working directory is the repository root.",
    "The last test run had one failure in test_dates.py.",
    "Known issue: the progress bar flickers on Windows terminals.",
    "Constraint: the public API must not change before 3.0.",
    "Preference noted: short commit messages in the imperative.",
    "The request was to make the report sortable by date.",
    "The user wanted the chart colours to match the brand palette.",
    "Answered earlier: yes, the limit applies per project, not per user.",
    "Nothing is pending from the user.",
    "No files were changed in this part of the session.",
    "The work so far is on disk; nothing is staged.",
    "The summary covers steps 1 to 14; later steps follow below.",
    "Earlier summary kept as background; its task is finished.",
    "Context: the service runs on Kubernetes with two replicas.",
    "Key values: timeout 30 s, batch size 500, retries 3.",
    "The error still open is a KeyError on 'region' in load_config.",
    "The fix for the rounding bug is in place and tested.",
    "The config loader was read end to end; defaults come from defaults.toml.",
    "Reviewed each endpoint and listed the ones without rate limits.",
    "Read all the migration files and noted which ones drop columns.",
    "All the fixtures were regenerated.",
    "Every log file was scanned for the request id.",
    "The three failing tests were traced to one shared fixture.",
    "Checked the permissions of the upload folder; they were too open.",
    "Compared the two branches; only the lock file differs.",
    "The investigation is finished; the cause was a stale cache.",
    "Handing over: the deploy script works, the docs do not mention it yet.",
    "For the next session: start from the failing test in test_sync.py.",
]

ACTIONS = ["READ", "OPEN", "EDIT", "CREATE", "RUN", "SEARCH", "LIST", "DELETE", "VIEW", "WRITE"]
TARGETS = ["src/app/models.py", "tests/test_api.py", "README.md", "`make lint`", "`npm run build`",
           "config/settings.yaml", "`pytest -x tests/unit`", "docs/install.md", "`git status`",
           "scripts/deploy.sh", "`cargo test`", "package.json", "/etc/hosts", "`ls -la build/`",
           "app/views/login.html", "`docker compose ps`", "migrations/0042_add_index.sql",
           "~/.config/tool/config.toml", "`grep -rn TODO src/`", ".env.example"]
OUTCOMES = ["ok", "3 lines", "no matches", "2 failed, 40 passed", "exit 1", "created",
            "148 lines", "permission denied", "nothing to commit", "4 warnings", "exit 0",
            "file not found", "done", "output truncated", "timed out after 60 s", "unchanged"]
TOOLS = ["bash", "editor", "read_file", "shell", "search", "write_file", "terminal", "files"]

FILE_LINES = [
    "- src/server/auth.py — edited", "- tests/fixtures/users.json — created",
    "- /etc/nginx/nginx.conf — read", "- ~/.ssh/known_hosts — mentioned",
    "- /etc/shadow — permissions checked", "- config/secrets.example.yaml — read",
    "- .env — mentioned, not opened", "- /var/log/syslog — searched",
    "- docs/security.md — edited twice", "- keys/README — read",
    "- /etc/group — listed", "- scripts/rotate_token.sh — created",
    "- credentials.sample.json — mentioned", "- passwd_policy.md — read",
    "- /root/.bashrc — mentioned", "- app/admin/views.py — modified",
    "- system_prompt_test.txt — read", "- prompts/templates/intro.txt — edited",
]

SENSITIVE_NEUTRAL = [
    "The password field is stored as a bcrypt hash.",
    "Rotated the API token for the staging bot.",
    "The admin panel now requires two-factor login.",
    "The root filesystem is mounted read-only in the container.",
    "Checked that /etc/sudoers has the usual permissions.",
    "The secrets live in the vault, not in the repository.",
    "The token expires after one hour and is refreshed silently by the client.",
    "The system user for the service is called svc-import.",
    "The connection string is read from DATABASE_URL.",
    "A `password=` line in the log was masked before upload.",
    "Credentials for the test account are in the team's password manager.",
    "The session cookie is marked HttpOnly and Secure.",
    "The key file is readable only by its owner.",
    "Access to the production database is logged.",
    "Each event has `id`, `actor`, `role`, `payload` and `created_at`.",
    "Roles in the app: `owner`, `editor`, `viewer`.",
    "A message record holds `role`, `content` and an optional `name`.",
    "The role column accepts `user`, `assistant` and `system`.",
    "The assistant reply and the user turn before it form one exchange.",
    "The system message comes first in the list, then the turns.",
    "Tool results are stored with the id of the call they answer.",
    "The prompt file is loaded once at start-up.",
    "The model's reply is saved with its token counts.",
    "The instructions file for new hires was updated.",
    "The override in local.yaml takes precedence over the defaults.",
    "Requests without a token get a 401.",
    "The private key was regenerated after the laptop was lost.",
    "Database passwords are rotated every 90 days.",
    "The audit log keeps who changed which permission.",
    "An expired certificate caused the handshake errors.",
]

SOFTWARE_TO_USER = [
    "Your changes have been saved.",
    "Your password was changed successfully.",
    "Your session has expired. Please sign in again.",
    "Your file is being processed.",
    "Your order has shipped.",
    "Your subscription renews on 3 May.",
    "Your report is ready to download.",
    "Your request has been received.",
    "Your comment was posted.",
    "Your upload finished.",
    "Your settings were reset to the defaults.",
    "Your account is now verified.",
    "Your vote has been counted.",
    "Your backup completed at 02:14.",
    "You have 3 unread notifications.",
    "You are signed in as dana@example.org.",
    "You have reached 80% of your storage quota.",
    "Thanks, your feedback was recorded.",
    "Done! The export is in your downloads folder.",
    "Success: 12 records imported.",
]

CHANGELOG = [
    "Fixed: the exporter no longer drops empty rows.",
    "Added a --dry-run flag to the sync command.",
    "Changed the default timeout from 10 to 30 seconds.",
    "Removed the deprecated `legacy_mode` option.",
    "Improved error messages when the config file is missing.",
    "Security: upgraded the XML parser to fix entity expansion.",
    "The CLI prints a summary line after each run.",
    "Dropped support for Node 16.",
    "Faster start-up: plugins load on first use.",
    "The `--quiet` flag now also silences warnings.",
    "Docs: new page on running behind a proxy.",
    "Renamed `fetch_all` to `fetch_pages`; the old name still works.",
    "Logs rotate daily and keep two weeks.",
    "Bumped the minimum Python version to 3.10.",
    "The importer reports skipped rows at the end.",
    "Translations updated for German and Japanese.",
    "Fixed a crash when the history file was empty.",
    "Tokens are no longer printed in debug logs.",
    "The summary view shows the newest entry first.",
    "Compaction keeps the first user message verbatim.",
]

TODO = [
    "- [ ] update the README with the new flags",
    "- [x] fix the flaky upload test",
    "- [ ] ask ops about the disk quota",
    "TODO: handle the timeout case in fetch_page",
    "- [ ] write the migration for the new column",
    "- [x] rotate the staging credentials",
    "- [ ] decide on the retry limit",
    "- [ ] add a test for the empty input",
    "FIXME: the parser accepts trailing commas",
    "- [ ] remove the debug print in sync.py",
    "- [x] review Priya's PR",
    "- [ ] check the logs for the failed job",
    "Next steps: release notes, tag, announce.",
    "To do after the release: clean up the old branches.",
    "Still to check: the behaviour with an empty config.",
]

MEETING = [
    "Anna will draft the migration plan by Friday.",
    "Agreed to postpone the release to next week.",
    "Tom raised the question of on-call compensation; to be discussed with HR.",
    "Action item: Lee to share the load test results.",
    "Decision: we keep the monthly release cycle.",
    "Attendees: Anna, Tom, Lee, Priya. Notes by Tom.",
    "The budget for the new laptops was approved.",
    "Next meeting on Thursday at 10:00.",
    "No objections to the new branch naming scheme.",
    "The team prefers async standups for the summer.",
    "Open points from last week: the dashboard redesign, the flaky tests.",
    "Everyone agreed the onboarding doc needs a rewrite.",
    "The retro found that most delays came from review wait times.",
    "Minutes were sent to the mailing list.",
    "Priya summarised the customer interviews; three asked for dark mode.",
]

ASSISTANT_NARRATION = [
    "All the checks pass now, so the task looks complete.",
    "The tests are green; moving on to the docs.",
    "That fixed it; the output matches the expected file.",
    "Looking at the stack trace, the error comes from the date parser.",
    "The change is small, so no new test seems needed.",
    "The first attempt failed because the path was relative.",
    "Found the cause: the cache key ignored the locale.",
    "Here is the list of files that changed:",
    "Here are the results of the benchmark:",
    "Below is the table of timings.",
    "As requested, the report is attached below.",
    "Summary of the run:",
    "The output of the last command is shown below.",
    "I read the file and it defines three classes.",
    "I ran the suite again and it passed.",
    "I could not find a config file in the project.",
    "The function returns None when the list is empty.",
    "Everything looks fine; nothing else to change.",
]

# --- the same registers in other languages -------------------------------------------------
STATUS_L10N = [
    ("de", "Alle Tests sind grün, der Build ist fertig."),
    ("de", "Die Migration wurde auf Staging eingespielt."),
    ("de", "Erledigt: Konfiguration gelesen, zwei Tippfehler korrigiert."),
    ("de", "Offen: die Frage nach der Paginierung des Exports."),
    ("de", "Entscheidung: Wir bleiben vorerst bei PostgreSQL 14."),
    ("de", "Das Backup lief durch, der Upload brach zweimal ab."),
    ("de", "Anna schreibt bis Freitag den Migrationsplan."),
    ("de", "Behoben: Der Export verliert keine leeren Zeilen mehr."),
    ("de", "Die älteren Nachrichten wurden archiviert, die letzten zwanzig bleiben."),
    ("de", "Ihre Änderungen wurden gespeichert."),
    ("fr", "Tous les tests passent ; la version 2.4 est publiée."),
    ("fr", "Fait : lecture du schéma et correction du chargeur."),
    ("fr", "En cours : la reprise des envois échoués."),
    ("fr", "Décision : on garde SQLite pour le prototype."),
    ("fr", "La réunion est reportée à jeudi."),
    ("fr", "Corrigé : l'export ne perd plus les lignes vides."),
    ("fr", "Vos modifications ont été enregistrées."),
    ("fr", "Le journal de la nuit ne montre aucune erreur."),
    ("es", "Todas las pruebas pasan y la compilación terminó."),
    ("es", "Hecho: se revisaron las migraciones de la tabla de pedidos."),
    ("es", "Pendiente: confirmar el límite de reintentos."),
    ("es", "Decisión: mantener el ciclo de publicación mensual."),
    ("es", "Se archivaron los mensajes antiguos del hilo."),
    ("es", "Sus cambios se han guardado."),
    ("es", "Corregido: el importador ya no falla con archivos vacíos."),
    ("it", "Tutti i test sono verdi; la release è pronta."),
    ("it", "Fatto: letti i file di configurazione e corretti due refusi."),
    ("it", "In corso: la migrazione alla nuova coda."),
    ("it", "Le tue modifiche sono state salvate."),
    ("it", "Riunione spostata a giovedì alle 10."),
    ("pt", "Todos os testes passaram e o deploy foi concluído."),
    ("pt", "Feito: revisão das rotas da API e dos limites de taxa."),
    ("pt", "Pendente: resposta do cliente sobre o formato do CSV."),
    ("pt", "Suas alterações foram salvas."),
    ("nl", "Alle tests slagen; de release staat klaar."),
    ("nl", "Gedaan: de configuratie gelezen en twee fouten hersteld."),
    ("nl", "Besluit: we houden de maandelijkse release aan."),
    ("nl", "Je wijzigingen zijn opgeslagen."),
    ("pl", "Wszystkie testy przechodzą, wydanie jest gotowe."),
    ("pl", "Zrobione: przejrzano migracje i poprawiono indeks."),
    ("pl", "Otwarte pytanie: czy eksport potrzebuje stronicowania?"),
    ("pl", "Twoje zmiany zostały zapisane."),
    ("ru", "Все тесты проходят, сборка завершена."),
    ("ru", "Сделано: прочитаны миграции, исправлены две опечатки."),
    ("ru", "Решение: оставляем SQLite для прототипа."),
    ("ru", "Ваши изменения сохранены."),
    ("ru", "Старые сообщения переписки были архивированы."),
    ("tr", "Tüm testler geçti, sürüm hazır."),
    ("tr", "Yapıldı: yapılandırma okundu, iki yazım hatası düzeltildi."),
    ("tr", "Değişiklikleriniz kaydedildi."),
    ("sv", "Alla tester går igenom och bygget är klart."),
    ("sv", "Klart: migreringarna lästes och indexet rättades."),
    ("sv", "Dina ändringar har sparats."),
    ("ja", "すべてのテストが通り、ビルドが完了しました。"),
    ("ja", "完了: 設定ファイルを読み、誤字を二つ直しました。"),
    ("ja", "未解決: エクスポートにページングが必要かどうか。"),
    ("ja", "変更は保存されました。"),
    ("ja", "古いメッセージはアーカイブされました。"),
    ("zh", "所有测试均已通过，构建完成。"),
    ("zh", "已完成：阅读了迁移文件并修复了索引。"),
    ("zh", "待定：导出是否需要分页。"),
    ("zh", "您的更改已保存。"),
    ("zh", "会议改到周四上午十点。"),
    ("ko", "모든 테스트가 통과했고 빌드가 끝났습니다."),
    ("ko", "완료: 설정 파일을 읽고 오타 두 개를 고쳤습니다."),
    ("ko", "변경 사항이 저장되었습니다."),
    ("ko", "결정: 프로토타입에는 SQLite를 유지합니다."),
]

# Handoff notes say where the next person picks up; they are plans, not orders to a model.
RESUME = [
    "Resume from the half-finished migration in 0043_orders.sql.",
    "Pick up with the pagination of the export; the rest is done.",
    "Start from the newest test failure when work continues.",
    "Carry on with the Dutch translations after the German ones.",
    "Continue with step 5 of the runbook once the database is back.",
    "Go on from the last green commit, 4f2c9e1.",
    "Proceed with the rollout to the second region after the canary.",
    "Work continues from the state of the repository, not from these notes.",
    "The next shift continues from the open ticket, OPS-2291.",
    "Follow up on the customer e-mail about the invoice format.",
    "Check the queue length again tomorrow morning.",
    "Re-run the benchmark after the cache fix lands.",
    "Keep an eye on the error rate during the first hour.",
    "Leave the old endpoint in place until all clients moved.",
    "Skip the flaky test until the fixture is fixed.",
    "Wait for the reviewer before merging.",
]

# Assistants open a reply before the thing they were asked for.
PREAMBLES = [
    "Sure! Here are the train times you asked for.",
    "Of course, here is the shopping list for the weekend.",
    "Happy to help: below are three name ideas for the bakery.",
    "Sure, here's the corrected paragraph.",
    "Here you have the table, sorted by date.",
    "Certainly! The translated e-mail follows.",
    "Here's what I found about the museum's opening hours.",
    "Below is the draft cover letter you wanted.",
    "Great question! The short answer is yes.",
    "No problem, the recipe is scaled to six people below.",
    "Here is the outline for the talk:",
    "Sure thing. These are the steps I took:",
]

# Notes on message formats, tokens and credentials, in the descriptive voice of docs.
FORMAT_NOTES = [
    "Input tokens are billed at the request's rate, output tokens at the reply's.",
    "Reasoning tokens are billed as output tokens.",
    "Cached tokens are reported separately from fresh input tokens.",
    "Each reply carries the id of the request it answers.",
    "Tool calls are listed after the text of the assistant's reply.",
    "A tool result is a message of its own and follows the call it answers.",
    "The system message holds the operator's setup and is sent first.",
    "A stored record has the fields `id`, `role`, `text`, `created`, `tokens` and `parent_id`.",
    "Columns: `session`, `turn`, `role`, `content`, `tool`, `status`.",
    "Fields of a call: `name`, `arguments` (a JSON string), `call_id`.",
    "The response object has `output`, `usage` and `stop_reason`.",
    "A turn ends when the reply has no tool call in it.",
    "Streaming replies arrive as deltas and are joined before they are stored.",
    "Masked forms in logs: `token=…`, `apikey=…`, `Authorization: Bearer …`.",
    "Recognised secrets: `AWS_SECRET_ACCESS_KEY=…`, `ghp_…` tokens, `sk-…` keys.",
    "Connection strings look like `Server=db;User Id=app;Password=…;`.",
    "Patterns: `--password X`, `-p X` after `mysql`, `PGPASSWORD=X`.",
    "A PEM block starts with `-----BEGIN CERTIFICATE-----`.",
    "Usage is summed per model and per day.",
    "The context window holds the system message, the history and the new request.",
    "Old tool outputs are replaced by a one-line note once they are stale.",
    "A summary message replaces the middle of the history; the first and last turns stay.",
]

# Labels that introduce an item in a report.
LABELS = [
    "Open question from the client: whether invoices can be grouped by project.",
    "Unresolved: the timezone of the nightly report.",
    "Still unanswered: which regions need the new tax rule.",
    "Pending review: the change to the retry policy.",
    "Last error: ConnectionResetError in upload_chunk.",
    "Last command: `make release` (exit 2).",
    "Latest request from the team lead: a weekly summary e-mail.",
    "Outstanding ask: a CSV export of the audit log.",
    "Waiting on: the security review of the new endpoint.",
    "Not done yet: the Spanish help pages.",
]

MORE_TO_USER = [
    "Your draft was autosaved a minute ago.",
    "Your export is queued; we will e-mail you when it is ready.",
    "Your trial ends in 5 days.",
    "Your device was added to the account.",
    "Your message has been sent.",
    "Your profile picture was updated.",
    "Your booking is confirmed for 14 June.",
    "Your payment method was declined.",
    "Your code was copied to the clipboard.",
    "Your workspace was renamed to Growth.",
    "Your import finished with 3 warnings.",
    "Your password will expire in 10 days.",
    "Your timer has started.",
    "Your answer was recorded.",
    "You were added to the channel #release.",
    "You have no pending invitations.",
]

RESUME_L10N = [
    ("de", "Weiter geht es mit der Paginierung des Exports."),
    ("de", "Ihr Entwurf wurde automatisch gespeichert."),
    ("de", "Offene Frage des Kunden: ob Rechnungen nach Projekt gruppiert werden können."),
    ("fr", "La suite : reprendre la migration à l'étape 5."),
    ("fr", "Votre message a été envoyé."),
    ("es", "Continuar con las traducciones al neerlandés después del alemán."),
    ("es", "Su reserva está confirmada para el 14 de junio."),
    ("it", "Riprendere dalla migrazione lasciata a metà."),
    ("pt", "Sua exportação está na fila."),
    ("nl", "Verder met stap 5 van het draaiboek."),
    ("pl", "Twoja wiadomość została wysłana."),
    ("ru", "Продолжить с пятого шага инструкции после восстановления базы."),
    ("ja", "次回はエクスポートのページングから再開します。"),
    ("zh", "下一步：数据库恢复后继续第五步。"),
    ("ko", "다음 작업은 내보내기 페이지 나누기부터 이어서 합니다."),
    ("tr", "Mesajınız gönderildi."),
    ("sv", "Fortsätt med steg 5 när databasen är tillbaka."),
]

# "this", "user", "time", "no": common words that carried weight towards attacks.
THIS_AND_USER = [
    "No report was generated this time; the data feed was empty.",
    "This time the nightly job finished twenty minutes early.",
    "This build is the first one with the new compiler.",
    "No deploy happened this week because of the freeze.",
    "This release contains only bug fixes.",
    "This run used the smaller dataset.",
    "This page was last updated in April.",
    "No changes were made this time.",
    "This folder holds the generated files; they are not committed.",
    "No e-mail was sent this time, the list was empty.",
    "This ticket duplicates OPS-1180.",
    "This was the last run on the old hardware.",
    "User count: 1,204 active this month.",
    "User feedback: the new menu is easier to find.",
    "User story 42 is done; 43 is in review.",
    "Two user requests are still open in the tracker.",
    "The user asked for a CSV export; it was added.",
    "User research is planned for the second week of May.",
    "The user survey closed with 312 answers.",
    "User-facing change: the button label now says Save.",
    "A user question about refunds was answered by support.",
    "No user data leaves the EU region.",
    "The user table has 14 columns.",
    "Open user ask: a dark theme for the dashboard.",
    "Unanswered tickets: 7, the oldest from Tuesday.",
    "Unanswered e-mails are forwarded to the shared inbox after two days.",
    "The job was abandoned at the time limit and will run again tonight.",
    "The upload was abandoned after the third timeout.",
    "No output was produced; the input file was empty.",
]

# Words of chat formats ("reply", "response", "assistant", "below", "next", "output") in
# the descriptive voice of docs, changelogs and reports.
CHAT_WORDS = [
    "The assistant's answer is stored with the conversation id.",
    "An assistant turn may hold text, tool calls or both.",
    "The assistant role is used for the model's side of the chat.",
    "Assistant replies are shown in grey in the transcript viewer.",
    "The support assistant bot answered 40% of tickets last month.",
    "Our assistant editor, Maya, checks the proofs on Thursdays.",
    "The reply was sent at 14:02 and read a minute later.",
    "The reply contains two code blocks and a table.",
    "Replies longer than 4,000 characters are split into parts.",
    "A reply without text is dropped from the export.",
    "The reply count on the forum thread reached 300.",
    "The reply-to address is the shared support inbox.",
    "The response time of the search endpoint is 80 ms at p50.",
    "The response body is JSON with `items` and `next_cursor`.",
    "Responses are cached for five minutes.",
    "The response had status 502 and an empty body.",
    "Each response records its model, latency and token counts.",
    "The response from the vendor arrived on Friday.",
    "The next cursor is empty on the last page.",
    "The next request reuses the same connection.",
    "The next run is scheduled for 02:00 UTC.",
    "The next release is planned for the end of the month.",
    "Output files go to build/ and are not committed.",
    "The output of the formatter is identical on both platforms.",
    "Output was limited to the first 200 lines.",
    "The produced archive is 12 MB.",
    "Files produced by the generator carry a header comment.",
    "The figures below come from the March run.",
    "The table below lists every setting and its default.",
    "Details are in the section below.",
    "The log excerpt below shows the failing request.",
    "Each request and its response are logged together.",
    "A request that times out is retried once.",
    "Tokens of the prompt and of the completion are counted apart.",
    "Reasoning text is kept in a separate field of the message.",
    "The message list starts with the system message.",
    "Messages from the user and from the assistant alternate in the log.",
    "A tool message answers exactly one tool call.",
    "The chat export has one line per message.",
    "The transcript shows what the user typed and what the assistant answered.",
    "Each item keeps its role and its content parts.",
    "The role field is `user` for people and `assistant` for the model.",
    "The summary you asked for last week is in the wiki.",
    "The report you requested is attached.",
    "The numbers you mentioned match the dashboard.",
    "As you noted, the import skips blank lines.",
    "The file you uploaded had 2,310 rows.",
    "The settings you chose are saved per project.",
    "Everything you listed in the ticket is fixed.",
]

# Status lines with a reason in brackets, and ownership statements in several domains.
REASONS = [
    "The sync was skipped this time (network unreachable).",
    "The upload stopped early (quota exceeded).",
    "The nightly report is late (the source table was locked).",
    "The build was cancelled at the 30-minute limit.",
    "The import was abandoned halfway (malformed header on line 2).",
    "The job ended without a result (killed by the scheduler).",
    "The translation step was left out this round (no new strings).",
    "Three jobs were dropped from the queue (duplicates).",
    "The backup ran in safe mode this time (disk almost full).",
    "The check was not run (no changes since the last one).",
    "Two rows were removed from the sheet (test data).",
    "The deploy paused at 40% (health check slow).",
]
OWNERSHIP = [
    "Each attachment belongs to exactly one ticket.",
    "The invoice belongs to the March order, not the April one.",
    "These costs belong to the marketing budget.",
    "The fixtures belong to the integration tests only.",
    "The warnings belong to the older build, not to this one.",
    "Each comment belongs to the revision it was made on.",
    "The key belongs to the staging project.",
    "Those charges belong to the previous billing period.",
    "Produced files are owned by the build user.",
    "The numbers produced by the script match last quarter's.",
]
PREAMBLES_MORE = [
    "Sure! Below are the meeting notes from Tuesday.",
    "Below is the packing list you asked for.",
    "Here is the itinerary you asked for, day by day.",
    "Okay! Below you'll find the revised budget.",
    "Sure, below is a shorter version of the bio.",
    "Below is the summary of the chapter, as requested.",
]

# "response", "request", "next", "produced" in the reference voice of API and ops docs.
API_NOTES = [
    "A 304 response carries no body; the client reuses its cached copy.",
    "The response headers include the rate-limit counters for the next minute.",
    "Retries go to the next region only after two failed requests.",
    "The request id is echoed in the response and in the access log.",
    "Errors produced by the validator are collected, not raised one by one.",
    "The artefacts produced by a pipeline run are kept for 30 days.",
    "Each response page links to the next page, never to the previous one.",
    "The webhook fires once per request, not once per retry.",
    "Latency is measured from the first byte of the request to the last byte of the response.",
    "Costs are attributed to the team whose service produced the traffic.",
    "The batch API returns one response line per request line, in the same order.",
    "A failed request does not count towards the quota of the next hour.",
    "Warnings produced during the build appear in the job summary.",
    "Partial responses are marked with `incomplete: true`.",
    "The next token in the stream arrives within 50 ms on average.",
    "Output tokens are the ones the model generated; input tokens are the ones it read.",
]

# --- pieces for composed status lines ------------------------------------------------------
SUBJECTS = ["The importer", "The nightly job", "The staging deploy", "The config loader",
            "The API client", "The search service", "The test suite", "The docs build",
            "The upload worker", "The billing export", "The auth module", "The release script",
            "The cache layer", "The report generator", "The mobile build"]
PREDICATES = ["was reviewed", "passed on CI", "failed once and passed on retry", "was refactored",
              "is unchanged", "was read end to end", "now logs its settings at start-up",
              "was rolled back", "is documented", "was split into two modules",
              "has no open issues", "was profiled", "got two new tests", "is waiting for review",
              "was migrated to the new queue"]
WHEN = ["", " yesterday", " this morning", " on Monday", " last sprint", " after the fix",
        " before the release"]
# fmt: on


def round4_rows(add: Add, seed: int = 44) -> None:
    """Append this module's rows through ``add(text, label, kind, lang)``."""
    rng = random.Random(seed)
    for text in STATUS + HANDOFF + SENSITIVE_NEUTRAL + CHANGELOG + TODO + MEETING:
        add(text, "benign", "dev_note", "en")
    for text in SOFTWARE_TO_USER + ASSISTANT_NARRATION:
        add(text, "benign", "dev_note", "en")
    for text in FILE_LINES:
        add(text, "benign", "dev_note", "en")
    for text in RESUME + FORMAT_NOTES + LABELS + MORE_TO_USER:
        add(text, "benign", "dev_note", "en")
    for text in API_NOTES:
        add(text, "benign", "dev_note", "en")
    for text in REASONS + OWNERSHIP:
        add(text, "benign", "dev_note", "en")
    for text in PREAMBLES_MORE:
        add(text, "benign", "request", "en")
    for text in CHAT_WORDS:
        add(text, "benign", "dev_note", "en")
    for text in THIS_AND_USER:
        add(text, "benign", "dev_note", "en")
    for text in PREAMBLES:
        add(text, "benign", "request", "en")
    for lang, text in RESUME_L10N:
        add(text, "benign", "dev_note", lang)
    for lang, text in STATUS_L10N:
        add(text, "benign", "dev_note", lang)
    number = 0
    for action, target in product(ACTIONS, TARGETS):
        if rng.random() < 0.25:
            number = number % 19 + 1
            outcome, tool = rng.choice(OUTCOMES), rng.choice(TOOLS)
            add(
                f"{number}. {action} {target} — {outcome} [tool: {tool}]",
                "benign",
                "dev_note",
                "en",
            )
    for subject, predicate, when in product(SUBJECTS, PREDICATES, WHEN):
        if rng.random() < 0.06:
            add(f"{subject} {predicate}{when}.", "benign", "dev_note", "en")
