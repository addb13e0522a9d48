using System.Buffers;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Leaf;
using Courier.Actors.Routing;
using Courier.Protocols.Nats;
using Courier.Protocols.Subjects;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Connections;

/// <summary>
/// A leaf node link, nats-server 2.9's leaf protocol (INFO/CONNECT, LS+/LS-, LMSG/HMSG), either side:
/// dialled by this node for one of <c>leafnodes.remotes</c> (this node is the leaf) or accepted on the
/// leaf node port (this node is the hub). The link is bound to one account on each side. On the publish
/// path it is just another subscriber: the other side's LS+ interest sits in the account's subject
/// space as subscriptions of this connection, and a publish that matches appends one LMSG/HMSG frame to
/// its outbound (<see cref="Publisher"/>, DESIGN.md §3). What it receives it publishes into its account
/// as a <see cref="PublisherKind.Leaf"/>.
/// </summary>
internal sealed partial class LeafConnection : Connection
{
    private readonly LeafLinkContext _context;
    private readonly RouteParser _parser;

    public LeafConnection(LeafLinkContext context, Stream stream, Socket socket, ulong id, IActorRef owner, LeafLink link, Account account)
        : base(context.Node, new Transport(stream, socket), id, owner, PublisherKind.Leaf)
    {
        _context = context;
        Link = link;
        var options = context.Node.Options;
        _parser = new RouteParser(options.MaxControlLine, Math.Max(options.MaxPayload, RouteParser.DefaultMaxPayload), leaf: true);
        Publisher.Echo = false;

        // A leaf's messages from its hub stay on this node (the cluster's other nodes have their own links);
        // a hub sends a leaf's messages on to its routes (nats-server's processMsgResults).
        Publisher.ToRoutes = !link.Solicited;
        BindAccount(account);
    }

    /// <inheritdoc />
    public override ConnectionKind Kind => ConnectionKind.Leaf;

    /// <summary>The link's state: which side this node is, what the other side said.</summary>
    public LeafLink Link { get; }

    /// <summary>The interest told to the other side, by key (<c>subject</c> or <c>subject queue</c>); guarded by the <see cref="LeafTable"/>'s lock.</summary>
    internal Dictionary<string, int> Smap { get; } = new(StringComparer.Ordinal);

    /// <summary>Never called: the publisher sends to leaf links itself, once per link (<see cref="Publisher"/>).</summary>
    internal override bool WriteMessage(Subscription sub, ref MsgTemplates templates, in ReadOnlySequence<byte> payload, Publisher from) =>
        throw new System.Diagnostics.UnreachableException("a leaf link's subscriptions are sent to by the publisher's leaf targets");

    /// <summary>A leaf's interest is told to the hub's routes when this node is the hub; a hub's interest never (nats-server's processLeafSub).</summary>
    internal override bool TellsRoutes(Subscription sub) => !Link.Solicited;

    /// <inheritdoc />
    private protected override void OnClosing() => _context.Leafs.Unregister(this);

    /// <inheritdoc />
    internal override ReadOutcome Process(ref ReadOnlySequence<byte> buffer)
    {
        var reader = new SequenceReader<byte>(buffer);
        var command = default(RouteCommand);
        var outcome = ReadOutcome.Continue;
        var link = Link;
        while (true)
        {
            var before = reader.Consumed;
            var status = _parser.TryRead(ref reader, ref command, out var error);
            if (status == ParseStatus.NeedMoreData)
            {
                break;
            }

            if (status == ParseStatus.Error)
            {
                Log.ProtocolError(_log, Id, NatsErrors.ToText(error));
                outcome = Fatal(null, "Parse Error");
                break;
            }

            // An accepted link must CONNECT first (nats-server's expectConnect).
            if (!link.Solicited && !link.ConnectReceived && command.Op != RouteOp.Connect)
            {
                outcome = Fatal(NatsErrors.AuthorizationViolation, "Authentication Failure");
                break;
            }

            switch (command.Op)
            {
                case RouteOp.Msg:
                case RouteOp.HMsg:
                    if (_pendingChanges.Count > 0)
                    {
                        // LS+/LS- before this message are in effect first, as a client's SUB before its PUB.
                        reader.Rewind(reader.Consumed - before);
                        outcome = ReadOutcome.Wait;
                        break;
                    }

                    if (link.ImportDenied(command.Subject))
                    {
                        Publisher.Count((int)command.Payload.Length);
                        break;
                    }

                    Publisher.Publish(command.Subject, command.Subject, command.ReplyTo, command.HeaderSize, command.Payload, command.Queues);
                    break;
                case RouteOp.Sub:
                    outcome = ProcessLeafSub(command.Subject, command.Queue, command.Weight);
                    break;
                case RouteOp.Unsub:
                    ProcessLeafUnsub(command.Subject, command.Queue);
                    break;
                case RouteOp.Ping:
                    WriteOwn(ProtocolWriter.Pong);
                    break;
                case RouteOp.Pong:
                    ReceivedPong();
                    break;
                case RouteOp.Info:
                    outcome = ProcessLeafInfo(command.Arguments);
                    break;
                case RouteOp.Connect:
                    outcome = ProcessLeafConnect(command.Arguments);
                    break;
                case RouteOp.Err:
                    outcome = ProcessError(Encoding.UTF8.GetString(command.Arguments));
                    break;
                default:
                    break; // +OK
            }

            if (outcome != ReadOutcome.Continue)
            {
                break;
            }
        }

        MarkActivity();
        buffer = buffer.Slice(reader.Position);
        return outcome;
    }

    // The hub's INFO: first on accept, then (connect_info) in answer to the CONNECT with the bound account.
    private LeafInfo HubInfo(bool connectInfo)
    {
        var options = _context.Node.Options;
        var local = Transport.Socket?.LocalEndPoint as IPEndPoint;
        var host = local?.Address.ToString() ?? options.LeafNodes.Host;
        if (host.Contains(':'))
        {
            host = $"[{host}]";
        }

        var port = local?.Port ?? options.LeafNodes.Port;
        return new LeafInfo
        {
            ServerId = _context.ServerId,
            ServerName = _context.ServerName,
            Version = options.NatsServerVersion,
            Go = "courier " + Server.Broker.CourierVersion,
            Host = options.LeafNodes.Host,
            Port = port,
            Headers = true,
            AuthRequired = true, // as nats-server: a leaf always sends CONNECT
            TlsRequired = _context.Tls is not null,
            TlsVerify = _context.Tls is { Options.Verify: true },
            MaxPayload = options.MaxPayload,
            JetStream = options.JetStream,
            ClientId = Id,
            Nonce = connectInfo ? null : Link.Nonce,
            Cluster = _context.ClusterName(),
            InfoOnConnect = true,
            ConnectInfo = connectInfo,
            LeafNodeUrls = [$"{host}:{port}"],
            RemoteAccount = connectInfo ? Account.Name : null,
        };
    }

    // CONNECT {"version":..,"user":..,"pass":..,"tls_required":..,"server_id":..,"name":..,"cluster":..,"headers":true}
    private ReadOutcome ProcessLeafConnect(ReadOnlySpan<byte> json)
    {
        var link = Link;
        if (link.Solicited)
        {
            return Fatal(null, "Protocol Violation"); // the hub never sends CONNECT
        }

        if (link.ConnectReceived)
        {
            return ReadOutcome.Continue;
        }

        if (!TryReadJson(json, NatsJsonContext.Default.LeafConnect, out var connect))
        {
            return Fatal(null, "Parse Error");
        }

        if (connect.Lang is not null)
        {
            // A client dialled the leaf node port: nats-server's ErrClientConnectedToLeafNodePort.
            return Fatal("attempted to connect to leaf node port", "Wrong Port");
        }

        if (connect.Gateway is { } gateway)
        {
            return Fatal($"Rejecting connection from gateway \"{gateway}\" on the leafnode port", "Wrong Gateway");
        }

        if (_context.ClusterName() is { Length: > 0 } cluster && connect.Cluster == cluster)
        {
            return Fatal("remote leafnode has same cluster name", "Cluster Names Identical");
        }

        if (Authenticate(connect) is not { } account)
        {
            Log.AuthFailed(_log, Id, connect.User ?? "");
            return Fatal(NatsErrors.AuthorizationViolation, "Authentication Failure");
        }

        if (!ReferenceEquals(account, Account))
        {
            BindAccount(account);
        }

        link.RemoteId = connect.ServerId;
        link.RemoteName = connect.Name ?? connect.ServerId;
        link.RemoteCluster = string.IsNullOrEmpty(connect.Cluster) ? null : connect.Cluster;
        link.Headers = connect.Headers;
        link.ConnectReceived = true;
        Rtt = DateTime.UtcNow - Started;
        Owner.Tell(ConnectionActor.Protocol.Connected.Instance);

        // The bound account back to the leaf, then all of the account's interest (nats-server's
        // sendPermsAndAccountInfo and initLeafNodeSmapAndSendSubs).
        Outbound.Write(ProtocolWriter.Info(JsonSerializer.SerializeToUtf8Bytes(HubInfo(connectInfo: true), NatsJsonContext.Default.LeafInfo)));
        _context.Leafs.Register(this);
        Log.Registered(_log, RemoteIp, RemotePort, Id, link.RemoteName ?? "", Account.Name, "accepted");
        return ReadOutcome.Continue;
    }

    // As nats-server's isLeafNodeAuthorized: leafnodes.authorization's user, else its users, else the clients' authorization.
    private Account? Authenticate(LeafConnect connect)
    {
        var options = _context.Node.Options.LeafNodes;
        var accounts = _context.Node.Accounts;
        if (options.Username is { } user)
        {
            return connect.User == user && Server.Authentication.Secrets.Equal(options.Password, connect.Pass)
                ? Bound(options.Account)
                : null;
        }

        if (options.Users.Count > 0)
        {
            foreach (var u in options.Users)
            {
                if (u.Username == connect.User)
                {
                    return Server.Authentication.Secrets.Equal(u.Password, connect.Pass) ? Bound(u.Account) : null;
                }
            }

            return null;
        }

        var nonce = Link.Nonce is { } n ? Encoding.ASCII.GetBytes(n) : null;
        var result = _context.Authentication.Authenticate(new ConnectOptions { User = connect.User, Pass = connect.Pass, Jwt = connect.Jwt, Sig = connect.Sig }, nonce: nonce, remoteIp: RemoteIp);
        return result.Succeeded ? result.Account ?? accounts.Global : null;

        Account? Bound(string? name) => string.IsNullOrEmpty(name) ? accounts.Global : accounts.Find(name);
    }

    // INFO {json}: the hub's first INFO makes the leaf send CONNECT; its connect_info INFO registers the link.
    private ReadOutcome ProcessLeafInfo(ReadOnlySpan<byte> json)
    {
        var link = Link;
        if (!link.Solicited)
        {
            return ReadOutcome.Continue; // a leaf does not send INFO; ignored as nats-server's accept side does
        }

        if (!TryReadJson(json, NatsJsonContext.Default.LeafInfo, out var info))
        {
            return Fatal(null, "Parse Error");
        }

        var finish = info.ConnectInfo;
        if (!link.InfoReceived)
        {
            // Anything but a leaf node port: no client id or no leafnode_urls (nats-server's ErrConnectedToWrongPort).
            if (info.ClientId == 0 || info.LeafNodeUrls is null)
            {
                Log.WrongPort(_log, Id);
                return Fatal(null, "Wrong Port");
            }

            link.InfoReceived = true;
            link.RemoteId = info.ServerId;
            link.RemoteName = string.IsNullOrEmpty(info.ServerName) ? info.ServerId : info.ServerName;
            link.RemoteCluster = string.IsNullOrEmpty(info.Cluster) ? null : info.Cluster;
            link.Headers = info.Headers;
            link.Nonce = info.Nonce;

            // nats-server's processLeafnodeInfo: a hub that requires TLS makes the remote use it.
            link.Tls = info.TlsRequired || link.Remote!.Tls is not null;
            if (!SendConnect(link))
            {
                return CloseWith("Authentication Failure");
            }

            finish |= !info.InfoOnConnect; // an older hub sends no second INFO
        }

        if (finish && !link.Registered && !IsClosed)
        {
            Rtt = DateTime.UtcNow - Started;
            Owner.Tell(ConnectionActor.Protocol.Connected.Instance);
            _context.Leafs.Register(this);
            Log.Registered(_log, RemoteIp, RemotePort, Id, link.RemoteName ?? "", Account.Name, "solicited");
        }

        return ReadOutcome.Continue;
    }

    private bool SendConnect(LeafLink link)
    {
        var url = link.Url!;
        string? user = null, pass = null;
        if (url.UserInfo.Length > 0)
        {
            var colon = url.UserInfo.IndexOf(':');
            user = Uri.UnescapeDataString(colon < 0 ? url.UserInfo : url.UserInfo[..colon]);
            pass = colon < 0 ? null : Uri.UnescapeDataString(url.UserInfo[(colon + 1)..]);
        }

        var connect = new LeafConnect
        {
            Version = _context.Node.Options.NatsServerVersion,
            User = user,
            Pass = pass,
            TlsRequired = link.Tls,
            ServerId = _context.ServerId,
            Name = _context.ServerName,
            Cluster = _context.ClusterName(),
            Headers = true,
            DenyPub = link.DenyImports,
        };
        if (link.Remote!.Credentials is { } credentials)
        {
            // nats-server's sendLeafConnect: the creds file's JWT, and its seed's signature of the hub's nonce.
            if (!LeafCredentials.TrySign(credentials, link.Nonce, out var jwt, out var sig, out var problem))
            {
                Log.CredentialsError(_log, Id, problem);
                return false;
            }

            (connect.Jwt, connect.Sig, connect.User, connect.Pass) = (jwt, sig, null, null);
        }

        Outbound.Write(Encoding.UTF8.GetBytes("CONNECT " + JsonSerializer.Serialize(connect, NatsJsonContext.Default.LeafConnect) + "\r\n"));
        Publisher.Touch(Outbound);
        return true;
    }

    private ReadOutcome ProcessError(string text)
    {
        Log.LeafError(_log, Id, text);
        if (text.Contains("Loop detected", StringComparison.Ordinal))
        {
            Link.LoopDetected = true;
        }

        return CloseWith("Parse Error");
    }

    // LS+ <subject> [<queue> <weight>]
    private ReadOutcome ProcessLeafSub(ReadOnlySpan<byte> subjectBytes, ReadOnlySpan<byte> queueBytes, int weight)
    {
        if (!SubjectRules.IsValidSubject(subjectBytes))
        {
            return ReadOutcome.Continue;
        }

        var link = Link;
        if (subjectBytes.StartsWith("$LDS."u8))
        {
            var own = _context.Leafs.LoopSubject(Account);
            if (subjectBytes.SequenceEqual(Encoding.UTF8.GetBytes(own)))
            {
                // Our own loop detection subject came back: this link closes a loop (nats-server's handleLeafNodeLoop).
                var text = $"Loop detected for leafnode account=\"{Account.Name}\". Delaying attempt to reconnect for 30s";
                Log.LeafError(_log, Id, text);
                link.LoopDetected = true;
                return Fatal(text, "Protocol Violation");
            }
        }
        else if (link.Solicited && !SubjectRules.HasWildcard(subjectBytes) && link.ExportDenied(subjectBytes))
        {
            return ReadOutcome.Continue; // deny_exports: the hub's interest in it is not taken (no-op for a spoke, as nats-server)
        }

        var key = queueBytes.IsEmpty ? Encoding.UTF8.GetString(subjectBytes) : $"{Encoding.UTF8.GetString(subjectBytes)} {Encoding.UTF8.GetString(queueBytes)}";
        lock (_subsLock)
        {
            if (_subs.TryGetValue(key, out var existing))
            {
                existing.Weight = Math.Max(weight, 1); // a queue group's new size
                return ReadOutcome.Continue;
            }
        }

        var account = Account;
        var subject = Encoding.UTF8.GetString(subjectBytes);
        var sub = new Subscription(this, account, subject, queueBytes.IsEmpty ? null : Encoding.UTF8.GetString(queueBytes), Encoding.UTF8.GetBytes(key), account.Space.ShardForSubscription(subjectBytes))
        {
            Weight = queueBytes.IsEmpty ? 1 : Math.Max(weight, 1),
        };
        lock (_subsLock)
        {
            _subs[key] = sub;
        }

        _pendingChanges.Add(new SubChange(sub, Add: true));
        return ReadOutcome.Continue;
    }

    // LS- <subject> [<queue>]
    private void ProcessLeafUnsub(ReadOnlySpan<byte> subjectBytes, ReadOnlySpan<byte> queueBytes)
    {
        var key = queueBytes.IsEmpty ? Encoding.UTF8.GetString(subjectBytes) : $"{Encoding.UTF8.GetString(subjectBytes)} {Encoding.UTF8.GetString(queueBytes)}";
        Subscription? removed;
        lock (_subsLock)
        {
            if (!_subs.Remove(key, out removed))
            {
                return;
            }
        }

        _pendingChanges.Add(new SubChange(removed, Add: false));
    }

    public override string ToString() => $"lid:{Id} {RemoteIp}:{RemotePort}";

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Error, Message = "lid:{Lid} - Leafnode Error '{Error}'")]
        public static partial void LeafError(ILogger logger, ulong lid, string error);

        [LoggerMessage(Level = LogLevel.Error, Message = "lid:{Lid} - Leafnode protocol error: {Error}")]
        public static partial void ProtocolError(ILogger logger, ulong lid, string error);

        [LoggerMessage(Level = LogLevel.Error, Message = "lid:{Lid} - no INFO from the hub in time")]
        public static partial void InfoTimeout(ILogger logger, ulong lid);

        [LoggerMessage(Level = LogLevel.Error, Message = "lid:{Lid} - attempted to connect to wrong port")]
        public static partial void WrongPort(ILogger logger, ulong lid);

        [LoggerMessage(Level = LogLevel.Error, Message = "lid:{Lid} - Leafnode credentials: {Problem}")]
        public static partial void CredentialsError(ILogger logger, ulong lid, string problem);

        [LoggerMessage(Level = LogLevel.Error, Message = "lid:{Lid} - Leafnode authentication failed for user \"{User}\"")]
        public static partial void AuthFailed(ILogger logger, ulong lid, string user);

        [LoggerMessage(Level = LogLevel.Information, Message = "{Ip}:{Port} - lid:{Lid} - Leafnode connection created to \"{Name}\" for account: {Account} ({How})")]
        public static partial void Registered(ILogger logger, string ip, int port, ulong lid, string name, string account, string how);
    }
}
