find . -name '*.ts'
