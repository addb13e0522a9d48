using Courier.Actors.Accounts;
using Courier.Actors.Server;
using Courier.Protocols.Subjects;

namespace Courier.Gateway.Configuration;

/// <summary>
/// <c>accounts { }</c> and <c>no_auth_user</c> (nats-server's parseAccounts, parseAccountExports,
/// parseAccountImports, parseJetStreamForAccount and validateNoAuthUser), with their error texts.
/// </summary>
internal sealed partial class OptionsBinder
{
    /// <summary>The global account's name: no configured account may take it.</summary>
    private const string GlobalAccountName = "$G";

    private static readonly UnimplementedKeys UnimplementedAccount = new(warned: ["nkey", "mappings", "maps", "limits"], refused: []);

    /// <summary>An export's <c>account_token_position</c> restricts what each importer may reach: refused.</summary>
    private static readonly UnimplementedKeys UnimplementedExport = new(
        warned: ["threshold", "response_threshold", "response_max_time", "response_time", "latency"],
        refused: ["account_token_position"]);

    private static readonly UnimplementedKeys UnimplementedImport = new(warned: ["share"], refused: []);

    private static readonly UnimplementedKeys UnimplementedAccountJetStream = new(
        warned: ["mem_max_stream_bytes", "memory_max_stream_bytes", "disk_max_stream_bytes", "store_max_stream_bytes", "max_ack_pending"],
        refused: []);

    private ConfigEntry? _accountsEntry;
    private ConfigEntry? _accountUsersEntry;
    private ConfigEntry? _noAuthUserEntry;

    private void BindAccounts(ConfigEntry entry)
    {
        _accountsEntry = entry;
        switch (entry.Value)
        {
            case List<object?> names:
                var seen = new HashSet<string>(StringComparer.Ordinal);
                foreach (var item in names)
                {
                    if (item is not string name)
                    {
                        Error(entry, $"Expected an account name, got {Describe(item)}");
                        continue;
                    }

                    if (name == GlobalAccountName)
                    {
                        Error(entry, $"\"{name}\" is a Reserved Account");
                        continue;
                    }

                    if (!seen.Add(name))
                    {
                        Error(entry, $"Duplicate Account Entry: {name}");
                        continue;
                    }

                    _options.Accounts.Add(new AccountOptions(name));
                }

                return;
            case ConfigMap map:
                foreach (var e in map.Entries)
                {
                    if (e.IsUsedAsVariable)
                    {
                        continue;
                    }

                    if (e.Value is not ConfigMap block)
                    {
                        Error(e, "Expected map entries for accounts");
                        continue;
                    }

                    if (e.Key == GlobalAccountName)
                    {
                        Error(e, $"\"{e.Key}\" is a Reserved Account");
                        continue;
                    }

                    BindAccount(e.Key, block);
                }

                return;
            default:
                Error(entry, $"Expected map or array of accounts, got {Describe(entry.Value)}");
                return;
        }
    }

    private void BindAccount(string name, ConfigMap block)
    {
        var account = new AccountOptions(name);
        _options.Accounts.Add(account);
        List<UserEntry>? users = null;
        foreach (var e in block.Entries)
        {
            switch (e.Key.ToLowerInvariant())
            {
                case "users":
                    _accountUsersEntry ??= e;
                    users = Users(e);
                    break;
                case "exports":
                    BindExports(e, account);
                    break;
                case "imports":
                    BindImports(e, account);
                    break;
                case "jetstream":
                    BindAccountJetStream(e, account);
                    break;
                case "default_permissions":
                    account.DefaultPermissions = BindPermissions(e);
                    break;
                default:
                    Unknown(e, UnimplementedAccount);
                    break;
            }
        }

        foreach (var user in users ?? [])
        {
            if (_options.Users.Exists(u => u.User == user.User))
            {
                Error(block.Entries.First(x => x.Key.Equals("users", StringComparison.OrdinalIgnoreCase)), $"Duplicate user \"{user.User}\" detected");
                continue;
            }

            // As nats-server's applyDefaultPermissions: the account's defaults for users without their own.
            _options.Users.Add(user with { Account = name, Permissions = user.Permissions ?? account.DefaultPermissions });
        }

        foreach (var nkey in _nkeyUsers)
        {
            _options.NkeyUsers.Add(nkey with { Account = name, Permissions = nkey.Permissions ?? account.DefaultPermissions });
        }

        _nkeyUsers.Clear();
    }

    // exports = [ {stream: "a.>"}, {service: "b", response_type: stream, accounts: [X]} ]
    private void BindExports(ConfigEntry entry, AccountOptions account)
    {
        if (entry.Value is not List<object?> list)
        {
            Error(entry, $"Exports should be an array, got {Describe(entry.Value)}");
            return;
        }

        foreach (var item in list)
        {
            if (item is not ConfigMap map)
            {
                Error(entry, $"Export Items should be a map with type entry, got {Describe(item)}");
                continue;
            }

            string? stream = null, service = null;
            var responseType = ServiceResponseType.Singleton;
            ConfigEntry? responseEntry = null;
            List<string>? accounts = null;
            foreach (var e in map.Entries)
            {
                switch (e.Key.ToLowerInvariant())
                {
                    case "stream":
                        if (service is not null)
                        {
                            Error(e, $"Detected stream \"{e.Value}\" but already saw a service");
                        }
                        else if (e.Value is not string s)
                        {
                            Error(e, $"Expected stream name to be string, got {Describe(e.Value)}");
                        }
                        else
                        {
                            stream = s;
                        }

                        break;
                    case "service":
                        if (stream is not null)
                        {
                            Error(e, $"Detected service \"{e.Value}\" but already saw a stream");
                        }
                        else if (e.Value is not string s)
                        {
                            Error(e, $"Expected service name to be string, got {Describe(e.Value)}");
                        }
                        else
                        {
                            service = s;
                        }

                        break;
                    case "response" or "response_type":
                        if (responseEntry is not null)
                        {
                            Error(e, "Duplicate response type definition");
                            break;
                        }

                        responseEntry = e;
                        if (e.Value is not string type)
                        {
                            Error(e, $"Expected response type to be string, got {Describe(e.Value)}");
                            break;
                        }

                        switch (type.ToLowerInvariant())
                        {
                            case "single" or "singleton":
                                responseType = ServiceResponseType.Singleton;
                                break;
                            case "stream":
                                responseType = ServiceResponseType.Streamed;
                                break;
                            case "chunk" or "chunked":
                                responseType = ServiceResponseType.Chunked;
                                break;
                            default:
                                Error(e, $"Unknown response type: \"{type}\"");
                                break;
                        }

                        break;
                    case "accounts":
                        accounts = [];
                        foreach (var a in e.Value as List<object?> ?? [])
                        {
                            if (a is string accountName)
                            {
                                accounts.Add(accountName);
                            }
                        }

                        break;
                    default:
                        Unknown(e, UnimplementedExport);
                        break;
                }
            }

            if (stream is not null && responseEntry is not null)
            {
                Error(responseEntry, "Detected response directive on non-service");
                continue;
            }

            if (stream is not null || service is not null)
            {
                account.Exports.Add(new ExportOptions(stream ?? service!, service is not null, responseType, accounts));
            }
        }
    }

    // imports = [ {stream: {account: A, subject: "a.>"}, prefix: p}, {service: {account: A, subject: b}, to: c} ]
    private void BindImports(ConfigEntry entry, AccountOptions account)
    {
        if (entry.Value is not List<object?> list)
        {
            Error(entry, $"Imports should be an array, got {Describe(entry.Value)}");
            return;
        }

        var serviceSubjects = new Dictionary<string, ImportOptions>(StringComparer.Ordinal);
        foreach (var item in list)
        {
            if (item is not ConfigMap map)
            {
                Error(entry, $"Import Items should be a map with type entry, got {Describe(item)}");
                continue;
            }

            (string Account, string Subject)? stream = null, service = null;
            string? prefix = null, to = null;
            var failed = false;
            foreach (var e in map.Entries)
            {
                switch (e.Key.ToLowerInvariant())
                {
                    case "stream" or "service":
                        var isStream = e.Key.Equals("stream", StringComparison.OrdinalIgnoreCase);
                        if (isStream ? service is not null : stream is not null)
                        {
                            Error(e, isStream ? "Detected stream but already saw a service" : "Detected service but already saw a stream");
                            failed = true;
                            break;
                        }

                        if (e.Value is not ConfigMap source)
                        {
                            Error(e, $"{(isStream ? "Stream" : "Service")} entry should be an account map, got {Describe(e.Value)}");
                            failed = true;
                            break;
                        }

                        string? from = null, subject = null;
                        foreach (var f in source.Entries)
                        {
                            switch (f.Key.ToLowerInvariant())
                            {
                                case "account":
                                    from = f.Value as string;
                                    break;
                                case "subject":
                                    subject = f.Value as string;
                                    break;
                                default:
                                    Ignored(f); // nats-server's parseImportStreamOrService reads only these two
                                    break;
                            }
                        }

                        if (string.IsNullOrEmpty(from) || string.IsNullOrEmpty(subject))
                        {
                            Error(e, "Expect an account name and a subject");
                            failed = true;
                            break;
                        }

                        if (isStream)
                        {
                            stream = (from, subject);
                        }
                        else
                        {
                            service = (from, subject);
                        }

                        break;
                    case "prefix":
                        if (TryString(e, out var p))
                        {
                            prefix = p;
                        }

                        break;
                    case "to":
                        if (TryString(e, out var t))
                        {
                            to = t;
                        }

                        break;
                    default:
                        Unknown(e, UnimplementedImport);
                        break;
                }
            }

            if (failed)
            {
                continue;
            }

            if (stream is { } s)
            {
                if (prefix is not null && to is not null)
                {
                    Error(map.Entries[0], "Stream import can not have a 'prefix' and a 'to' property");
                    continue;
                }

                account.Imports.Add(new ImportOptions(false, s.Account, s.Subject, to, prefix));
            }
            else if (service is { } v)
            {
                var import = new ImportOptions(true, v.Account, v.Subject, to ?? v.Subject, null);
                if (serviceSubjects.TryGetValue(import.To!, out var dup))
                {
                    Error(map.Entries[0], $"Duplicate service import subject \"{import.To}\", previously used in import for account \"{dup.Account}\", subject \"{dup.Subject}\"");
                    continue;
                }

                serviceSubjects[import.To!] = import;
                account.Imports.Add(import);
            }
        }
    }

    // jetstream: enabled | disabled | true | false | { max_mem, max_file, max_streams, max_consumers, max_bytes_required }
    private void BindAccountJetStream(ConfigEntry entry, AccountOptions account)
    {
        switch (entry.Value)
        {
            case bool b:
                account.JetStream = b ? new AccountJetStreamLimits() : null;
                return;
            case string s when s.Equals("enabled", StringComparison.OrdinalIgnoreCase) || s.Equals("enable", StringComparison.OrdinalIgnoreCase):
                account.JetStream = new AccountJetStreamLimits();
                return;
            case string s when s.Equals("disabled", StringComparison.OrdinalIgnoreCase) || s.Equals("disable", StringComparison.OrdinalIgnoreCase):
                account.JetStream = null;
                return;
            case string s:
                Error(entry, $"Expected 'enabled' or 'disabled' for string value, got '{s}'");
                return;
            case ConfigMap block:
                var limits = new AccountJetStreamLimits();
                foreach (var e in block.Entries)
                {
                    var key = e.Key.ToLowerInvariant();
                    if (key is "max_bytes_required" or "max_stream_bytes" or "max_bytes")
                    {
                        if (e.Value is bool required)
                        {
                            limits = limits with { MaxBytesRequired = required };
                        }
                        else
                        {
                            Error(e, $"Expected a parseable bool for \"{e.Key}\", got {e.Value}");
                        }

                        continue;
                    }

                    if (key is not ("max_memory" or "max_mem" or "mem" or "memory" or "max_store" or "max_file" or "max_disk" or "store" or "disk"
                        or "max_streams" or "streams" or "max_consumers" or "consumers"))
                    {
                        Unknown(e, UnimplementedAccountJetStream);
                        continue;
                    }

                    if (e.Value is not long n)
                    {
                        Error(e, $"Expected a parseable size for \"{e.Key}\", got {e.Value}");
                        continue;
                    }

                    limits = key switch
                    {
                        "max_memory" or "max_mem" or "mem" or "memory" => limits with { MaxMemory = n },
                        "max_streams" or "streams" => limits with { MaxStreams = (int)Math.Clamp(n, -1, int.MaxValue) },
                        "max_consumers" or "consumers" => limits with { MaxConsumers = (int)Math.Clamp(n, -1, int.MaxValue) },
                        _ => limits with { MaxFile = n },
                    };
                }

                account.JetStream = limits;
                return;
            default:
                Error(entry, $"Expected map, bool or string to define JetStream, got {Describe(entry.Value)}");
                return;
        }
    }

    /// <summary>
    /// The checks that need the whole file: users of accounts beside a single user or token, exports
    /// and imports against the accounts they name (nats-server's second pass of parseAccounts), and
    /// no_auth_user against the users.
    /// </summary>
    private void ValidateAccounts()
    {
        if (_accountUsersEntry is { } usersEntry && _options.Users.Exists(u => u.Account is not null))
        {
            if (_options.Username is not null)
            {
                Error(usersEntry, "Can not have a single user/pass and accounts");
            }
            else if (_options.Token is not null)
            {
                Error(usersEntry, "Can not have a token and accounts");
            }
        }

        if (_accountsEntry is { } at && _errors.Count == 0)
        {
            ValidateExportsAndImports(at);
        }

        if (_noAuthUserEntry is { } noAuth && _options.NoAuthUser is { } noAuthUser)
        {
            if (_options.Users.Count == 0)
            {
                Error(noAuth, $"no_auth_user: \"{noAuthUser}\" present, but users are not defined");
            }
            else if (!_options.Users.Exists(u => u.User == noAuthUser))
            {
                Error(noAuth, $"no_auth_user: \"{noAuthUser}\" not present as user in authorization block or account configuration");
            }
        }
    }

    private void ValidateExportsAndImports(ConfigEntry at)
    {
        var byName = new Dictionary<string, AccountOptions>(StringComparer.Ordinal);
        foreach (var account in _options.Accounts)
        {
            byName[account.Name] = account;
        }

        foreach (var account in _options.Accounts)
        {
            foreach (var export in account.Exports)
            {
                var kind = export.IsService ? "service" : "stream";
                foreach (var name in export.Accounts ?? [])
                {
                    if (!byName.ContainsKey(name))
                    {
                        Error(at, $"\"{name}\" account not defined for {kind} export");
                    }
                }

                if (!SubjectRules.IsValidSubject(export.Subject))
                {
                    Error(at, $"Error adding {kind} export \"{export.Subject}\": subject is not valid");
                }
            }
        }

        foreach (var account in _options.Accounts)
        {
            foreach (var import in account.Imports)
            {
                var kind = import.IsService ? "service" : "stream";
                if (!byName.TryGetValue(import.Account, out var exporter))
                {
                    Error(at, $"\"{import.Account}\" account not defined for {kind} import");
                    continue;
                }

                if (AccountExports.FindExport(exporter, account.Name, import.Subject, import.IsService) is null)
                {
                    Error(at, $"Error adding {kind} import \"{import.Subject}\": {kind} import not authorized");
                    continue;
                }

                if (!import.IsService && import.Prefix is { } prefix && SubjectRules.HasWildcard(System.Text.Encoding.UTF8.GetBytes(prefix)))
                {
                    Error(at, $"Error adding stream import \"{import.Subject}\": stream import prefix can not contain wildcard tokens");
                }
            }
        }
    }
}
