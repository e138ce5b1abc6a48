"""A throw-away certificate authority for labs, tests and benchmarks (never for production).

ITMP peers authenticate with TLS 1.3 client and server certificates; the customer's identity is
the certificate's common name. Keys are ECDSA P-256: quick to make and to handshake with.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from itmp.channel import TlsFiles


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


@dataclass
class LabCa:
    directory: Path
    name: str
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    @property
    def cert_path(self) -> Path:
        return self.directory / f"{self.name}.ca.pem"

    @classmethod
    def create(cls, directory: Path, name: str = "itmp-test-ca") -> LabCa:
        directory.mkdir(parents=True, exist_ok=True)
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(name))
            .issuer_name(_name(name))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(False, False, False, False, False, True, True, False, False),
                critical=True,
            )
            .sign(key, hashes.SHA256())
        )
        ca = cls(directory, name, key, cert)
        ca.cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(directory / f"{name}.ca.key", key)
        return ca

    @classmethod
    def load(cls, directory: Path, name: str = "itmp-test-ca") -> LabCa:
        """A CA made earlier by `create` (to issue more certificates in a running lab)."""
        cert = x509.load_pem_x509_certificate((directory / f"{name}.ca.pem").read_bytes())
        key = serialization.load_pem_private_key((directory / f"{name}.ca.key").read_bytes(), None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{directory / name}.ca.key is not an EC key")
        return cls(directory, name, key, cert)

    def issue(
        self,
        common_name: str,
        *,
        server_names: list[str] | None = None,
        trust: Path | None = None,
        key: ec.EllipticCurvePrivateKey | None = None,
    ) -> TlsFiles:
        """A leaf certificate; `server_names` (DNS names or IP literals) make it a server cert.

        `trust` is the CA file the holder uses to check its peer (defaults to this CA); `key`
        reuses a key pair (benchmarks issuing thousands of certificates).
        """
        key = key or ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        )
        if server_names:
            alt: list[x509.GeneralName] = []
            for n in server_names:
                try:
                    alt.append(x509.IPAddress(ipaddress.ip_address(n)))
                except ValueError:
                    alt.append(x509.DNSName(n))
            builder = builder.add_extension(x509.SubjectAlternativeName(alt), critical=False)
            builder = builder.add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
            )
        else:
            builder = builder.add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
            )
        cert = builder.sign(self.key, hashes.SHA256())
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in common_name)
        cert_path = self.directory / f"{safe}.pem"
        key_path = self.directory / f"{safe}.key"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(key_path, key)
        return TlsFiles(cert_path, key_path, trust or self.cert_path)
