using Courier.Actors.Server;
using Courier.Protocols;

namespace Courier.Gateway.Configuration;

/// <summary><c>authorization { }</c>: single user, token, users list, permissions (nats-server parseAuthorization).</summary>
internal sealed partial class OptionsBinder
{
    /// <summary>A CONNECT timeout above this many seconds draws nats-server's "is high" warning.</summary>
    private const double HighAuthTimeoutSeconds = 60;

    /// <summary>Who may connect, decided elsewhere than in the config: refused.</summary>
    private static readonly UnimplementedKeys UnimplementedAuthorization = new(warned: [], refused: ["auth_callout", "auth_hook", "proxy_required"]);

    /// <summary>Restrictions on how a user may connect: refused.</summary>
    private static readonly UnimplementedKeys UnimplementedUser = new(
        warned: [],
        refused: ["allowed_connection_types", "connection_types", "clients", "proxy_required"]);

    /// <summary>The nkey users of the users list being bound (<see cref="Users"/>).</summary>
    private readonly List<NkeyUserEntry> _nkeyUsers = [];

    private void BindAuthorization(ConfigEntry entry)
    {
        if (entry.Value is not ConfigMap block)
        {
            Error(entry, $"expected a block for \"authorization\", got {Describe(entry.Value)}");
            return;
        }

        string? user = null, password = null, token = null;
        List<UserEntry>? users = null;
        Permissions? defaults = null;
        TimeSpan? timeout = null;
        foreach (var e in block.Entries)
        {
            switch (e.Key.ToLowerInvariant())
            {
                case "user" or "username":
                    if (TryString(e, out var s))
                    {
                        user = s;
                    }

                    break;
                case "pass" or "password":
                    if (TryString(e, out s))
                    {
                        password = s;
                    }

                    break;
                case "token":
                    if (TryString(e, out s))
                    {
                        token = s;
                    }

                    break;
                case "timeout":
                    timeout = AuthTimeout(e);
                    break;
                case "users":
                    users = Users(e);
                    break;
                case "default_permission" or "default_permissions" or "permissions":
                    defaults = BindPermissions(e);
                    break;
                default:
                    Unknown(e, UnimplementedAuthorization);
                    break;
            }
        }

        if ((user is not null || password is not null) && token is not null)
        {
            Error(entry, "Cannot have a user/pass and token");
            return;
        }

        if (users is not null && user is not null)
        {
            Error(entry, "Can not have a single user/pass and a users array");
            return;
        }

        if (users is not null && token is not null)
        {
            Error(entry, "Can not have a token and a users array");
            return;
        }

        _options.Username = user;
        _options.Password = password;
        _options.Token = token;
        _options.DefaultPermissions = defaults;
        if (timeout is { } t)
        {
            _options.AuthTimeout = t;
        }

        // As nats-server's applyDefaultPermissions: users without their own permissions get the defaults.
        foreach (var u in users ?? [])
        {
            _options.Users.Add(u.Permissions is null && defaults is not null ? u with { Permissions = defaults } : u);
        }

        foreach (var n in _nkeyUsers)
        {
            _options.NkeyUsers.Add(n.Permissions is null && defaults is not null ? n with { Permissions = defaults } : n);
        }

        _nkeyUsers.Clear();
    }

    /// <summary><c>timeout</c>: seconds as an integer or float, or a duration string.</summary>
    /// <summary>What nats-server's parseSimpleAuth reads: one user and password, a token, a timeout.</summary>
    private sealed class SimpleAuthorization
    {
        public string? Username { get; set; }

        public string? Password { get; set; }

        public string? Token { get; set; }

        public TimeSpan? Timeout { get; set; }
    }

    /// <summary>
    /// The <c>authorization</c> block of the websocket, mqtt and cluster blocks (nats-server's
    /// parseSimpleAuth); any other key goes to <paramref name="other"/>. Null when it is not a block.
    /// </summary>
    private SimpleAuthorization? BindSimpleAuthorization(ConfigEntry entry, Action<ConfigEntry> other)
    {
        if (entry.Value is not ConfigMap block)
        {
            Error(entry, $"expected a block for \"{entry.Key}\", got {Describe(entry.Value)}");
            return null;
        }

        var auth = new SimpleAuthorization();
        foreach (var e in block.Entries)
        {
            switch (e.Key.ToLowerInvariant())
            {
                case "user" or "username":
                    if (TryString(e, out var s))
                    {
                        auth.Username = s;
                    }

                    break;
                case "pass" or "password":
                    if (TryString(e, out s))
                    {
                        auth.Password = s;
                    }

                    break;
                case "token":
                    if (TryString(e, out s))
                    {
                        auth.Token = s;
                    }

                    break;
                case "timeout":
                    auth.Timeout = AuthTimeout(e);
                    break;
                default:
                    other(e);
                    break;
            }
        }

        return auth;
    }

    private TimeSpan? AuthTimeout(ConfigEntry entry)
    {
        double seconds;
        switch (entry.Value)
        {
            case long l:
                seconds = l;
                break;
            case double d:
                seconds = d;
                break;
            case string s:
                if (!GoDuration.TryParse(s, out var duration, out var error))
                {
                    Error(entry, $"error parsing authorization config, 'timeout' {error}");
                    return null;
                }

                seconds = duration.TotalSeconds;
                break;
            default:
                Error(entry, $"error parsing authorization config, 'timeout' wrong type: {Describe(entry.Value)}");
                return null;
        }

        if (seconds < 0 || seconds > TimeSpan.MaxValue.TotalSeconds)
        {
            Error(entry, $"authorization 'timeout' of {seconds} seconds is out of range");
            return null;
        }

        if (seconds > HighAuthTimeoutSeconds)
        {
            Warn(entry, $"invalid use of field \"{entry.Key}\": timeout of {seconds} seconds is high, consider keeping it under 60 seconds. "
                + "possibly caused by unquoted duration; use '1m' instead of 1m, for example");
        }

        return TimeSpan.FromSeconds(seconds);
    }

    /// <summary>
    /// <c>users = [ { user, password, permissions }, { nkey, permissions }, ... ]</c>: password users
    /// are returned, nkey users collected in <see cref="_nkeyUsers"/> for the block that listed them.
    /// </summary>
    private List<UserEntry>? Users(ConfigEntry entry)
    {
        if (entry.Value is not List<object?> list)
        {
            Error(entry, $"Expected users field to be an array, got {Describe(entry.Value)}");
            return null;
        }

        var users = new List<UserEntry>();
        var names = new HashSet<string>(StringComparer.Ordinal);
        foreach (var item in list)
        {
            if (item is not ConfigMap map)
            {
                Error(entry, $"Expected user entry to be a map/struct, got {Describe(item)}");
                continue;
            }

            string? user = null, password = null;
            Permissions? permissions = null;
            ConfigEntry? nkey = null;
            foreach (var e in map.Entries)
            {
                switch (e.Key.ToLowerInvariant())
                {
                    case "user" or "username":
                        if (TryString(e, out var s))
                        {
                            user = s;
                        }

                        break;
                    case "pass" or "password":
                        if (TryString(e, out s))
                        {
                            password = s;
                        }

                        break;
                    case "permission" or "permissions" or "authorization":
                        permissions = BindPermissions(e);
                        break;
                    case "nkey":
                        nkey = e;
                        break;
                    default:
                        Unknown(e, UnimplementedUser);
                        break;
                }
            }

            var at = map.Entries.Count > 0 ? map.Entries[0] : entry;
            if (nkey is not null)
            {
                // As nats-server's parseUsers: a user public key, and neither user name nor password.
                if (!TryString(nkey, out var key))
                {
                    continue;
                }

                if (!Actors.Server.Identity.NatsJwt.IsPublicKey(NATS.NKeys.PrefixByte.User, key))
                {
                    Error(at, "Not a valid public nkey for a user");
                    continue;
                }

                if (user is not null || password is not null)
                {
                    Error(at, "Nkey users do not take usernames or passwords");
                    continue;
                }

                _nkeyUsers.Add(new NkeyUserEntry(key, permissions));
                continue;
            }

            if (user is null)
            {
                Error(at, "User entry requires a user");
                continue;
            }

            if (!names.Add(user))
            {
                Error(at, $"Duplicate user \"{user}\" detected");
                continue;
            }

            users.Add(new UserEntry(user, password, permissions));
        }

        return users;
    }

    /// <summary><c>permissions { publish = ..., subscribe = ... }</c> (also pub/sub, import/export).</summary>
    private Permissions? BindPermissions(ConfigEntry entry)
    {
        if (entry.Value is not ConfigMap map)
        {
            Error(entry, $"Expected permissions to be a map/struct, got {Describe(entry.Value)}");
            return null;
        }

        SubjectPermission? publish = null, subscribe = null;
        ResponsePermission? responses = null;
        foreach (var e in map.Entries)
        {
            switch (e.Key.ToLowerInvariant())
            {
                case "pub" or "publish" or "import":
                    publish = BindSubjectPermission(e, allowQueue: false);
                    break;
                case "sub" or "subscribe" or "export":
                    subscribe = BindSubjectPermission(e, allowQueue: true);
                    break;
                case "publish_allow_responses" or "allow_responses":
                    responses = BindAllowResponses(e);
                    break;
                default:
                    if (!e.IsUsedAsVariable)
                    {
                        // nats-server's parseUserPermissions
                        Error(e, $"Unknown field \"{e.Key}\" parsing permissions");
                    }

                    break;
            }
        }

        if (responses is not null && publish?.Allow is null)
        {
            // As nats-server: allow_responses turns off the blanket publish allow.
            publish = new SubjectPermission([], publish?.Deny);
        }

        return new Permissions(publish, subscribe, responses);
    }

    // allow_responses: true | false | { max: <n>, expires: "<duration>" } (nats-server's parseAllowResponses)
    private ResponsePermission? BindAllowResponses(ConfigEntry entry)
    {
        switch (entry.Value)
        {
            case bool b:
                return b ? new ResponsePermission() : null;
            case ConfigMap map:
                var permission = new ResponsePermission();
                foreach (var e in map.Entries)
                {
                    switch (e.Key.ToLowerInvariant())
                    {
                        case "max" or "max_msgs" or "max_messages" or "max_responses":
                            if (e.Value is long max)
                            {
                                // 0 keeps the default; negative means no limit.
                                permission = max == 0 ? permission : permission with { MaxMessages = (int)Math.Clamp(max, int.MinValue, int.MaxValue) };
                            }
                            else
                            {
                                Error(e, $"expected an integer for \"{e.Key}\", got {Describe(e.Value)}");
                            }

                            break;
                        case "expires" or "expiration" or "ttl":
                            if (e.Value is not string text)
                            {
                                Error(e, "error parsing expires, not a duration string");
                                return null;
                            }

                            if (!GoDuration.TryParse(text, out var ttl, out var error))
                            {
                                Error(e, $"error parsing expires: {error}");
                                return null;
                            }

                            permission = ttl == TimeSpan.Zero ? permission : permission with { Expires = ttl };
                            break;
                        default:
                            if (!e.IsUsedAsVariable)
                            {
                                Error(e, $"Unknown field \"{e.Key}\" parsing permissions");
                            }

                            break;
                    }
                }

                return permission;
            default:
                Error(entry, "error parsing response permissions, expected a boolean or a map");
                return null;
        }
    }

    /// <summary>
    /// A subject, a list of subjects (both: the allow list), or <c>{ allow = ..., deny = ... }</c>.
    /// Subscribe subjects may carry a queue group: <c>"foo.* workers"</c>. An empty block is no restriction.
    /// </summary>
    private SubjectPermission? BindSubjectPermission(ConfigEntry entry, bool allowQueue)
    {
        if (entry.Value is not ConfigMap map)
        {
            return Subjects(entry, entry.Value, allowQueue, out var allow) ? new SubjectPermission(allow, null) : null;
        }

        if (map.Count == 0)
        {
            return null;
        }

        IReadOnlyList<string>? allowed = null, denied = null;
        foreach (var e in map.Entries)
        {
            switch (e.Key.ToLowerInvariant())
            {
                case "allow":
                    Subjects(e, e.Value, allowQueue, out allowed);
                    break;
                case "deny":
                    Subjects(e, e.Value, allowQueue, out denied);
                    break;
                default:
                    if (!e.IsUsedAsVariable)
                    {
                        // nats-server's parseSubjectPermission
                        Error(e, $"Unknown field name \"{e.Key}\" parsing subject permissions, only 'allow' or 'deny' are permitted");
                    }

                    break;
            }
        }

        return new SubjectPermission(allowed, denied);
    }

    /// <summary>A subject or list of subjects, each checked; an empty list gives null (no restriction), as nats-server.</summary>
    private bool Subjects(ConfigEntry entry, object? value, bool allowQueue, out IReadOnlyList<string>? subjects)
    {
        subjects = null;
        List<string> result = [];
        switch (value)
        {
            case string s:
                result.Add(s);
                break;
            case List<object?> list:
                foreach (var item in list)
                {
                    if (item is not string subject)
                    {
                        Error(entry, $"Subject in permissions array cannot be cast to string: {Describe(item)}");
                        return false;
                    }

                    result.Add(subject);
                }

                break;
            default:
                Error(entry, $"Expected subject permissions to be a subject, or array of subjects, got {Describe(value)}");
                return false;
        }

        foreach (var subject in result)
        {
            if (SubjectError(subject, allowQueue) is { } error)
            {
                Error(entry, error);
                return false;
            }
        }

        subjects = result.Count == 0 ? null : result;
        return true;
    }

    /// <summary>Null when <paramref name="subject"/> is valid (nats-server checkPermSubjectArray), else why not.</summary>
    private static string? SubjectError(string subject, bool allowQueue)
    {
        if (IsValidSubject(subject))
        {
            return null;
        }

        if (!allowQueue)
        {
            return $"subject \"{subject}\" is not a valid subject";
        }

        var parts = subject.Split([' ', '\t', '\n', '\r', '\f'], StringSplitOptions.RemoveEmptyEntries);
        return parts.Length != 2 ? $"subject \"{subject}\" is not a valid subject"
            : !IsValidSubject(parts[0]) ? $"subject \"{parts[0]}\" is not a valid subject"
            : !IsValidSubject(parts[1]) ? $"queue \"{parts[1]}\" is not a valid queue"
            : null;
    }

    /// <summary>Non-empty dot-separated tokens without white space; <c>&gt;</c> only as the last token.</summary>
    private static bool IsValidSubject(string subject)
    {
        if (subject.Length == 0)
        {
            return false;
        }

        var fullWildcardSeen = false;
        foreach (var token in subject.Split('.'))
        {
            if (token.Length == 0 || fullWildcardSeen || token.AsSpan().IndexOfAny(" \t\n\r\f") >= 0)
            {
                return false;
            }

            fullWildcardSeen = token == ">";
        }

        return true;
    }
}
