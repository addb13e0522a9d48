using Courier.Actors.Server;
using Courier.Protocols;

namespace Courier.Gateway.Monitoring;

/// <summary>/leafz and the <c>leaf</c> part of /varz, as nats-server 2.9's Leafz and LeafNodeOptsVarz.</summary>
internal sealed partial class MonitoringPages
{
    /// <summary>
    /// The node's leaf node links (<c>?subs=1</c>: each with the subjects the other side is interested in;
    /// <c>?acc=</c>: only the links bound to that account), as nats-server's LeafzOptions.
    /// </summary>
    public Leafz Leafz(bool subs, string? account = null)
    {
        var links = _broker.Leafs?.Links ?? [];
        var leafs = new List<LeafzLeaf>(links.Length);
        foreach (var c in links)
        {
            if (!string.IsNullOrEmpty(account) && c.Account.Name != account)
            {
                continue;
            }

            List<string>? list = null;
            var held = c.SubscriptionsSnapshot();
            if (subs)
            {
                list = new List<string>(held.Length);
                foreach (var sub in held)
                {
                    list.Add(sub.Queue is null ? sub.Subject : $"{sub.Subject} {sub.Queue}");
                }
            }

            leafs.Add(new LeafzLeaf
            {
                Name = c.Link.RemoteName ?? "",
                IsSpoke = c.Link.Solicited,
                Account = c.Account.Name,
                Ip = c.RemoteIp,
                Port = c.RemotePort,
                Rtt = c.Rtt > TimeSpan.Zero ? GoDuration.Format(c.Rtt.Ticks * 100) : null,
                InMsgs = c.InMsgs,
                OutMsgs = c.Outbound.OutMsgs,
                InBytes = c.InBytes,
                OutBytes = c.Outbound.OutBytes,
                NumSubs = held.Length,
                Subs = list,
            });
        }

        return new Leafz { ServerId = _broker.ServerId, Now = DateTime.UtcNow, NumLeafs = leafs.Count, Leafs = leafs.Count == 0 ? null : leafs };
    }

    private VarzLeaf LeafVarz(ServerOptions o)
    {
        var leaf = o.LeafNodes;
        List<VarzLeafRemote>? remotes = null;
        foreach (var remote in leaf.Remotes)
        {
            var urls = new List<string>(remote.Urls.Count);
            foreach (var url in remote.Urls)
            {
                urls.Add($"{url.Host}:{url.Port}");
            }

            (remotes ??= []).Add(new VarzLeafRemote
            {
                LocalAccount = remote.Account,
                TlsTimeout = remote.Tls is { } remoteTls && !ReferenceEquals(remoteTls, RemoteTlsOptions.Default) ? remoteTls.Timeout.TotalSeconds : 0, // a block's (nats-server: none for a tls:// URL alone)
                Urls = urls,
                Deny = remote.DenyImports.Count > 0 || remote.DenyExports.Count > 0
                    ? new VarzLeafDeny
                    {
                        Exports = remote.DenyExports.Count > 0 ? remote.DenyExports : null,
                        Imports = remote.DenyImports.Count > 0 ? remote.DenyImports : null,
                    }
                    : null,
            });
        }

        return new VarzLeaf
        {
            Host = leaf.Enabled ? leaf.Host : null,
            Port = leaf.Enabled ? LeafListenPort ?? leaf.Port : 0,
            AuthTimeout = leaf.Enabled ? leaf.AuthTimeout.TotalSeconds : 0,
            TlsTimeout = leaf.Enabled ? (leaf.Tls?.Timeout ?? TlsOptions.DefaultTimeout).TotalSeconds : 0, // nats-server sets it with a listener, TLS or not
            TlsRequired = leaf.Tls is not null,
            TlsVerify = leaf.Tls is { Verify: true },
            Remotes = remotes,
        };
    }
}
