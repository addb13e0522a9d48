using Courier.Actors.Server;

namespace Courier.Gateway.Configuration;

/// <summary><c>leafnodes { }</c>, as nats-server 2.9's parseLeafNodes, parseLeafAuthorization and parseRemoteLeafNodes (server/opts.go).</summary>
internal sealed partial class OptionsBinder
{
    /// <summary>
    /// <c>leafnodes { }</c> keys nats-server has that Courier does not implement: all refused (a leaf link
    /// concerns security and what reaches whom; starting without them would pretend).
    /// </summary>
    private static readonly UnimplementedKeys UnimplementedLeafNodes = new(
        warned: [],
        refused: ["leafnode_advertise", "advertise", "no_advertise", "min_version", "minimum_version", "compression"]);

    /// <summary><c>leafnodes.remotes[]</c> keys Courier does not implement: refused.</summary>
    private static readonly UnimplementedKeys UnimplementedLeafRemote = new(
        warned: [],
        refused:
        [
            "hub", "no_randomize", "dont_randomize", "ws_compress", "ws_compression",
            "websocket_compress", "websocket_compression", "ws_no_masking", "websocket_no_masking",
            "jetstream_cluster_migrate", "js_cluster_migrate", "compression",
        ]);

    private void BindLeafNodes(ConfigEntry entry)
    {
        if (entry.Value is not ConfigMap block)
        {
            Error(entry, $"Expected map to define a leafnode, got {Describe(entry.Value)}");
            return;
        }

        var leaf = _options.LeafNodes;
        foreach (var e in block.Entries)
        {
            switch (e.Key.ToLowerInvariant())
            {
                case "listen":
                    if (TryHostPort(e, out var host, out var port))
                    {
                        leaf.Host = host ?? leaf.Host;
                        leaf.Port = port;
                    }

                    break;
                case "port":
                    if (TryPort(e, out port))
                    {
                        leaf.Port = port;
                    }

                    break;
                case "host" or "net":
                    if (TryString(e, out var s))
                    {
                        leaf.Host = s;
                    }

                    break;
                case "authorization":
                    BindLeafAuthorization(e, leaf);
                    break;
                case "tls":
                    // nats-server's parseLeafNodes: a listener's block, verify optional.
                    leaf.Tls = LoadLinkTls(e, "leafnodes", alwaysVerify: false) ?? leaf.Tls;
                    break;
                case "remotes":
                    BindLeafRemotes(e, leaf);
                    break;
                case "reconnect" or "reconnect_delay" or "reconnect_interval":
                    // nats-server: whole seconds as a number; a duration string is taken too.
                    if (e.Value is long seconds)
                    {
                        if (seconds <= 0)
                        {
                            Error(e, $"\"{e.Key}\" must be positive");
                        }
                        else
                        {
                            leaf.ReconnectInterval = TimeSpan.FromSeconds(seconds);
                        }
                    }
                    else if (TryDuration(e, out var interval))
                    {
                        leaf.ReconnectInterval = interval;
                    }

                    break;
                default:
                    Unknown(e, UnimplementedLeafNodes);
                    break;
            }
        }

        if (leaf.Tls is { } tls && !HasAuthorizationTimeout(block))
        {
            leaf.AuthTimeout = tls.Timeout + TimeSpan.FromSeconds(1); // nats-server's getDefaultAuthTimeout with TLS
        }
    }

    /// <summary>Whether the block's <c>authorization { }</c> sets <c>timeout</c> (else nats-server derives it from TLS's).</summary>
    private static bool HasAuthorizationTimeout(ConfigMap block)
    {
        foreach (var e in block.Entries)
        {
            if (e.Key.Equals("authorization", StringComparison.OrdinalIgnoreCase) && e.Value is ConfigMap auth
                && auth.Entries.Any(a => a.Key.Equals("timeout", StringComparison.OrdinalIgnoreCase)))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary><c>leafnodes.authorization { user, password, account, users [ { user, password, account } ], timeout }</c>.</summary>
    private void BindLeafAuthorization(ConfigEntry entry, LeafNodeOptions leaf)
    {
        var auth = BindSimpleAuthorization(entry, other =>
        {
            switch (other.Key.ToLowerInvariant())
            {
                case "account":
                    if (TryString(other, out var account))
                    {
                        leaf.Account = account;
                    }

                    break;
                case "users":
                    BindLeafUsers(other, leaf);
                    break;
                default:
                    Unknown(other, UnimplementedAuthorization);
                    break;
            }
        });
        if (auth is null)
        {
            return;
        }

        if (auth.Token is not null)
        {
            Error(entry, "unknown field \"token\""); // nats-server's parseLeafAuthorization has no token
        }

        (leaf.Username, leaf.Password) = (auth.Username ?? leaf.Username, auth.Password ?? leaf.Password);
        leaf.AuthTimeout = auth.Timeout ?? leaf.AuthTimeout;
    }

    /// <summary><c>users = [ { user, password, account } ]</c>, as nats-server's parseLeafUsers.</summary>
    private void BindLeafUsers(ConfigEntry entry, LeafNodeOptions leaf)
    {
        if (entry.Value is not List<object?> list)
        {
            Error(entry, $"Expected users field to be an array, got {Describe(entry.Value)}");
            return;
        }

        foreach (var item in list)
        {
            if (item is not ConfigMap map)
            {
                Error(entry, $"Expected user entry to be a map/struct, got {Describe(item)}");
                continue;
            }

            string? user = null, password = null, account = null;
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
                    case "account":
                        if (TryString(e, out s))
                        {
                            account = s;
                        }

                        break;
                    default:
                        Unknown(e, UnimplementedKeys.None);
                        break;
                }
            }

            if (user is null)
            {
                Error(entry, "User entry requires a user");
                continue;
            }

            leaf.Users.Add(new LeafNodeUser(user, password, account));
        }
    }

    /// <summary><c>remotes = [ { url | urls, account, credentials, deny_imports, deny_exports } ]</c>.</summary>
    private void BindLeafRemotes(ConfigEntry entry, LeafNodeOptions leaf)
    {
        if (entry.Value is not List<object?> list)
        {
            Error(entry, $"Expected remotes field to be an array, got {Describe(entry.Value)}");
            return;
        }

        foreach (var item in list)
        {
            if (item is not ConfigMap map)
            {
                Error(entry, $"Expected remote leafnode entry to be a map/struct, got {Describe(item)}");
                continue;
            }

            var remote = new LeafNodeRemote();
            foreach (var e in map.Entries)
            {
                switch (e.Key.ToLowerInvariant())
                {
                    case "url" or "urls":
                        IEnumerable<object?> values = e.Value is List<object?> urls ? urls : [e.Value];
                        foreach (var value in values)
                        {
                            if (value is not string text)
                            {
                                Error(e, $"Expected remote leafnode url to be a string, got {Describe(value)}");
                            }
                            else if (!RouteUrls.TryParse(text, out var url))
                            {
                                Error(e, $"Error parsing remote leafnode url \"{text}\"");
                            }
                            else if (url.Scheme is "ws" or "wss")
                            {
                                Error(e, $"leaf node remotes over WebSocket (\"{text}\") are not supported by Courier");
                            }
                            else
                            {
                                // tls://: TLS with the system's roots unless the remote has its own block.
                                remote.Urls.Add(url);
                                if (url.Scheme == "tls")
                                {
                                    remote.Tls ??= RemoteTlsOptions.Default;
                                }
                            }
                        }

                        break;
                    case "account" or "local":
                        if (TryString(e, out var account))
                        {
                            remote.Account = account;
                        }

                        break;
                    case "credentials" or "creds":
                        if (TryString(e, out var creds))
                        {
                            remote.Credentials = creds;
                        }

                        break;
                    case "tls":
                        remote.Tls = LoadRemoteTls(e) ?? remote.Tls;
                        break;
                    case "deny_imports" or "deny_import":
                        BindSubjectList(e, remote.DenyImports);
                        break;
                    case "deny_exports" or "deny_export":
                        BindSubjectList(e, remote.DenyExports);
                        break;
                    default:
                        Unknown(e, UnimplementedLeafRemote);
                        break;
                }
            }

            if (remote.Urls.Count == 0)
            {
                Error(entry, "remote leafnode entry requires a url");
                continue;
            }

            leaf.Remotes.Add(remote);
        }
    }

    private void BindSubjectList(ConfigEntry entry, List<string> into)
    {
        IEnumerable<object?> values = entry.Value is List<object?> list ? list : [entry.Value];
        foreach (var value in values)
        {
            if (value is string subject && Courier.Protocols.Subjects.SubjectRules.IsValidSubject(subject))
            {
                into.Add(subject);
            }
            else
            {
                Error(entry, $"invalid subject {Describe(value)} in \"{entry.Key}\"");
            }
        }
    }
}
