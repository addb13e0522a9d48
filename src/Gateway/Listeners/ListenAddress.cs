using System.Net;
using System.Net.NetworkInformation;
using System.Net.Sockets;

namespace Courier.Gateway.Listeners;

/// <summary>Turns a configured host into an address to bind, and lists the URLs clients can use.</summary>
internal static class ListenAddress
{
    public static IPAddress Resolve(string host)
    {
        if (string.IsNullOrEmpty(host) || host == "0.0.0.0")
        {
            return IPAddress.Any;
        }

        if (host is "::" or "[::]")
        {
            return IPAddress.IPv6Any;
        }

        if (host == "localhost")
        {
            return IPAddress.Loopback;
        }

        if (IPAddress.TryParse(host.Trim('[', ']'), out var address))
        {
            return address;
        }

        return Dns.GetHostAddresses(host).First(a => a.AddressFamily == AddressFamily.InterNetwork);
    }

    /// <summary>
    /// The URLs a listener can be reached at, as nats-server writes them to the ports file: the
    /// address itself, or every local IPv4 address when bound to all interfaces.
    /// </summary>
    public static IReadOnlyList<string> Urls(string scheme, IPEndPoint endPoint)
    {
        if (!endPoint.Address.Equals(IPAddress.Any) && !endPoint.Address.Equals(IPAddress.IPv6Any))
        {
            return [Format(scheme, endPoint.Address, endPoint.Port)];
        }

        var urls = new List<string>();
        foreach (var nic in NetworkInterface.GetAllNetworkInterfaces())
        {
            if (nic.OperationalStatus != OperationalStatus.Up)
            {
                continue;
            }

            foreach (var unicast in nic.GetIPProperties().UnicastAddresses)
            {
                if (unicast.Address.AddressFamily == AddressFamily.InterNetwork)
                {
                    urls.Add(Format(scheme, unicast.Address, endPoint.Port));
                }
            }
        }

        return urls.Count > 0 ? urls : [Format(scheme, IPAddress.Loopback, endPoint.Port)];
    }

    private static string Format(string scheme, IPAddress address, int port) =>
        address.AddressFamily == AddressFamily.InterNetworkV6 ? $"{scheme}://[{address}]:{port}" : $"{scheme}://{address}:{port}";
}
